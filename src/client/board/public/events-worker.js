/**
 * The SharedWorker that holds the one event stream of a browser's board tabs (events-hub.js). A tab holds a
 * Web Lock named after itself while it lives; the worker asks for the same lock, and gets it when the tab
 * is gone (a MessagePort tells nobody it closed), then lets go of the tab's topics.
 */
import { EventHub } from './events-hub.js';

const hub = new EventHub();

globalThis.addEventListener('connect', (event) => {
  const port = event.ports[0];
  const post = (message) => port.postMessage(message);
  port.addEventListener('message', ({ data }) => {
    if (data?.type === 'attach') {
      hub.attach(port, post, data);
      if (data.lock) globalThis.navigator.locks.request(data.lock, () => hub.detach(port));
    } else if (data?.type === 'detach') hub.detach(port);
    else if (data?.type === 'resync') hub.resync(port, data.name);
  });
  port.start();
});
