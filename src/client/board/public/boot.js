/**
 * The page's first script (index.html, `async`): opens the board's event stream before the page's other
 * modules (preact and the views) have loaded, so the server's read of the saga overlaps their download.
 */
import { openEarly } from './api.js';

openEarly();
