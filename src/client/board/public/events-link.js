/**
 * A page's link to the board's event hub (events-hub.js): the SharedWorker's (events-worker.js), shared by
 * the browser's board tabs, or one of the page's own where there is none; and the link boot.js opens before
 * the page's other modules load. api.js's openEvents turns what comes through it into whole views.
 */
import { EventHub } from './events-hub.js';

/** The stream boot.js opened while the page's modules loaded, if it is for this saga and token. */
let early = null;

/**
 * Opens the page's events at once (boot.js, before the page's other modules have loaded), so the board
 * reads the saga while the browser fetches the rest; what arrives meanwhile waits for openEvents.
 */
export function openEarly(token) {
  const match = /^#\/saga\/(.+)$/.exec(location.hash);
  const name = match ? decodeURIComponent(match[1]) : null;
  const entry = { name, token, buffer: [], sink: null };
  entry.sink = (message) => entry.buffer.push(message);
  entry.link = connectHub((message) => entry.sink(message), { token, saga: name });
  early = entry;
}

/** The early stream for this saga and token, else null (and the early one, if any, closed). */
export function takeEarly(name, token) {
  const entry = early;
  early = null;
  if (!entry) return null;
  if (entry.name === name && entry.token === token) return entry;
  entry.link.close();
  return null;
}

let tabs = 0;

/** A link to the shared hub (or a hub of this page's own): `{ resync(name), close() }`. */
export function connectHub(receive, topics) {
  if (typeof globalThis.SharedWorker === 'undefined' || !globalThis.navigator.locks) {
    const hub = (localHub ??= new EventHub());
    const client = {};
    hub.attach(client, receive, topics);
    return { resync: (n) => hub.resync(client, n), close: () => hub.detach(client) };
  }
  const port = new globalThis.SharedWorker('/events-worker.js', { type: 'module', name: 'saga-board-events' })
    .port;
  port.onmessage = (event) => receive(event.data);
  let release = null;
  let closed = false;
  // Held while this link lives: the worker learns from it that a closed tab is gone.
  const lock = `saga-board-tab-${Date.now()}-${Math.random().toString(36).slice(2)}-${tabs++}`;
  globalThis.navigator.locks.request(
    lock,
    () =>
      new Promise((resolve) => {
        release = resolve;
        if (closed) return resolve();
        port.postMessage({ type: 'attach', lock, ...topics });
      }),
  );
  return {
    resync: (n) => port.postMessage({ type: 'resync', name: n }),
    close() {
      closed = true;
      port.postMessage({ type: 'detach' });
      port.onmessage = null;
      port.close();
      release?.();
    },
  };
}

let localHub = null;
