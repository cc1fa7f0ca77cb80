/**
 * The board server's API (README "The saga board"): reads and the answer POST with the Bearer token (the
 * event stream with `?token=`: EventSource sends no headers), and the token itself (taken once from
 * `?token=`, kept in sessionStorage, never left in the address bar).
 */
import { applyDelta } from './delta.js';
import { connectHub, takeEarly } from './events-link.js';

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
  const started = takeEarly(name, storedToken());
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
  const source = { close: () => link.close() };
  return source;
}

/* Starting and steering (steer-routes.ts): each resolves `{ ok: true, ...reply }` or `{ ok: false, error }`. */

async function postJson(url, body) {
  const token = storedToken();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const reply = await res.json().catch(() => ({}));
    if (res.ok) return { ok: true, ...reply };
    return { ok: false, error: reply.error || `${res.status} ${res.statusText}` };
  } catch (err) {
    return { ok: false, error: `The board server could not be reached: ${err.message}` };
  }
}

/** The new-saga form's choices: the repositories (with their agent profiles) and the flag vocabulary. */
export const fetchStartOptions = () => getJson('/api/start-options');

/** Checks (`confirm: false`, proposes the name) or starts (`confirm: true`) a saga from the form. */
export const startSaga = (request) => postJson('/api/sagas', request);

export const cancelSaga = (name) => postJson(`${sagaPath(name)}/cancel`, {});

/** A saga's whole view, once (the notifications read a waiting saga's questions from it). */
export const fetchSagaView = (name) => getJson(sagaPath(name));

/** The saga list, once (a hidden tab's notifications read it now and then instead of an event stream). */
export const fetchSagaList = () => getJson('/api/sagas');
