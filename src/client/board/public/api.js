/**
 * The board server's API (README "The saga board"): reads and the answer POST with the Bearer token (the
 * event stream with `?token=`: EventSource sends no headers), and the token itself (taken once from
 * `?token=`, kept in sessionStorage, never left in the address bar).
 */
import { applyDelta } from './delta.js';
import { EventHub } from './events-hub.js';

const TOKEN_KEY = 'saga-board-token';

/** Moves `?token=` from the URL into sessionStorage (once, at load) and returns the token or null. */
export function adoptToken() {
  const params = new URLSearchParams(location.search);
  const fromUrl = params.get('token');
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    params.delete('token');
    const query = params.toString();
    window.history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

const sagaPath = (name) => `/api/sagas/${encodeURIComponent(name)}`;

const storedToken = () => sessionStorage.getItem(TOKEN_KEY);

async function getJson(url) {
  const token = storedToken();
  const headers = { Accept: 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
  const res = await fetch(url, { headers });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || `${res.status} ${res.statusText}`);
  return body;
}

/**
 * Answers an interaction; resolves `{ ok: true, answer }` or `{ ok: false, error }` with the server's own
 * refusal text (the Update's message), so the card can show it.
 */
export async function respond(name, token, { interactionId, choice, text }) {
  const body = text ? { interactionId, choice, text } : { interactionId, choice };
  try {
    const res = await fetch(`${sagaPath(name)}/respond`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const reply = await res.json().catch(() => ({}));
    if (res.ok) return { ok: true, answer: reply.answer };
    return { ok: false, error: reply.error || `${res.status} ${res.statusText}` };
  } catch (err) {
    return { ok: false, error: `The board server could not be reached: ${err.message}` };
  }
}

export const fetchTranscript = (name, ref, tail = 200) =>
  getJson(`${sagaPath(name)}/tasks/${encodeURIComponent(ref)}/transcript?tail=${tail}`);

export const fetchDiff = (name, ref) => getJson(`${sagaPath(name)}/tasks/${encodeURIComponent(ref)}/diff`);

export const fetchReport = (name) => getJson(`${sagaPath(name)}/report`);

/**
 * The page's events: `sagas` (the list) and, on a saga's page, its whole view on every change (deltas are
 * applied here, so callers always get whole objects). The browser's tabs share one stream through the
 * SharedWorker events-worker.js; without SharedWorker, the page holds its own (events-hub.js in the page).
 * Returns `{ close() }`.
 */
export function openEvents(name, { onSagas, onStatus, onLive }) {
  const started = takeEarly(name);
  let view = null;
  let version = null;
  let link = null;
  const receive = (message) => {
    if (message.type === 'live') onLive(message.live);
    else if (message.type === 'sagas') onSagas(message.data);
    else if (message.name !== name) return;
    else if (message.type === 'status') {
      if (view === null) globalThis.performance.mark('saga-board:first-status'); // what bench/board.ts times
      [view, version] = [message.data, message.version];
      onStatus(view);
    } else if (message.type === 'delta') {
      if (view === null || version !== message.from) return link?.resync(name);
      [view, version] = [applyDelta(view, message.ops), message.to];
      onStatus(view);
    }
  };
  if (started) {
    link = started.link;
    started.sink = receive;
    started.buffer.forEach(receive);
  } else link = connectHub(receive, { token: storedToken(), saga: name });
  return { close: () => link.close() };
}

/** The stream boot.js opened while the page's modules loaded, if it is for this saga and token. */
let early = null;

/**
 * Opens the page's events at once (boot.js, before the page's other modules have loaded), so the board
 * reads the saga while the browser fetches the rest; what arrives meanwhile waits for openEvents.
 */
export function openEarly() {
  const token = adoptToken();
  const match = /^#\/saga\/(.+)$/.exec(location.hash);
  const name = match ? decodeURIComponent(match[1]) : null;
  const entry = { name, token, buffer: [], sink: null };
  entry.sink = (message) => entry.buffer.push(message);
  entry.link = connectHub((message) => entry.sink(message), { token, saga: name });
  early = entry;
}

function takeEarly(name) {
  const entry = early;
  early = null;
  if (!entry) return null;
  if (entry.name === name && entry.token === storedToken()) return entry;
  entry.link.close();
  return null;
}

let tabs = 0;

/** A link to the shared hub (or a hub of this page's own): `{ resync(name), close() }`. */
function connectHub(receive, topics) {
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
