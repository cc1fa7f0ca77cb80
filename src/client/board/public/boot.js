/**
 * The page's first script (index.html, `async`): opens the board's event stream before the page's other
 * modules (preact and the views) have loaded, so the server's read of the saga overlaps their download.
 */
import { adoptToken } from './api.js';
import { openEarly } from './events-link.js';

openEarly(adoptToken());
