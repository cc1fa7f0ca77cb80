/**
 * One event stream for all of a browser's board tabs (README "The saga board"): the hub holds ONE
 * EventSource for the union of its clients' topics (the list, and each saga a tab shows), keeps each saga's
 * latest whole view, and hands each client only its topics: a saga's whole view when it attaches, then the
 * deltas. It runs in the SharedWorker (events-worker.js), or in the tab itself where there is none.
 * Messages to a client: `{ type: 'sagas', data }`, `{ type: 'status', name, version, data }`,
 * `{ type: 'delta', name, from, to, ops }`, `{ type: 'live', live }`.
 */
import { applyDelta } from './delta.js';

export class EventHub {
  constructor(openSource = (url) => new EventSource(url)) {
    this.openSource = openSource;
    /** client → { post, sagas: Set of names } */
    this.clients = new Map();
    this.token = null;
    this.source = null;
    this.url = null;
    this.live = false;
    this.list = null;
    /** saga name → { value, version } */
    this.sagas = new Map();
  }

  /** A tab shows `saga` (or the list alone, null); the token is the tab's, from its sessionStorage. */
  attach(client, post, { token, saga }) {
    if (token) this.token = token;
    this.clients.set(client, { post, sagas: new Set(saga ? [saga] : []) });
    post({ type: 'live', live: this.live });
    if (this.list) post({ type: 'sagas', data: this.list });
    const known = saga && this.sagas.get(saga);
    if (known) post({ type: 'status', name: saga, version: known.version, data: known.value });
    this.reopen();
  }

  detach(client) {
    if (this.clients.delete(client)) this.reopen();
  }

  /** A client saw a version gap: its saga's whole latest view again. */
  resync(client, name) {
    const known = this.sagas.get(name);
    const entry = this.clients.get(client);
    if (known && entry) entry.post({ type: 'status', name, version: known.version, data: known.value });
  }

  /** Opens (or keeps) the one stream for the union of the clients' topics; none when no client is left. */
  reopen(force = false) {
    const wanted = new Set();
    for (const { sagas } of this.clients.values()) for (const name of sagas) wanted.add(name);
    for (const name of [...this.sagas.keys()]) if (!wanted.has(name)) this.sagas.delete(name);
    const params = new URLSearchParams();
    for (const name of [...wanted].sort()) params.append('saga', name);
    if (this.token) params.set('token', this.token);
    const url = this.clients.size ? `/api/events?${params}` : null;
    if (url === this.url && !force) return;
    this.source?.close();
    this.source = null;
    this.url = url;
    if (!url) return this.setLive(false);
    const source = this.openSource(url);
    this.source = source;
    const on = (name, handler) =>
      source.addEventListener(name, (event) => {
        if (this.source !== source) return;
        try {
          handler(JSON.parse(event.data), event.lastEventId);
        } catch (err) {
          console.error('bad board event', err);
        }
      });
    on('sagas', (data) => this.onSagas(data));
    on('status', (data, id) => this.onStatus(data, id));
    on('status-delta', (data) => this.onDelta(data));
    source.addEventListener('open', () => this.source === source && this.setLive(true));
    source.addEventListener('error', () => this.source === source && this.setLive(false));
  }

  setLive(live) {
    if (this.live === live) return;
    this.live = live;
    this.send(() => true, { type: 'live', live });
  }

  send(wants, message) {
    for (const { post, sagas } of this.clients.values()) if (wants(sagas)) post(message);
  }

  onSagas(data) {
    this.list = data;
    this.send(() => true, { type: 'sagas', data });
  }

  onStatus(data, id) {
    const name = data?.status?.name;
    if (!name) return;
    const version = id ? Number(id) : null;
    const known = this.sagas.get(name);
    // The same version again (the stream reopened for another tab's saga): the clients have it already.
    if (known && version !== null && known.version === version) return;
    this.sagas.set(name, { value: data, version });
    this.send((sagas) => sagas.has(name), { type: 'status', name, version, data });
  }

  onDelta({ name, from, to, ops }) {
    const known = this.sagas.get(name);
    // A lost event (a gap in the versions): reopening brings every saga's whole view.
    if (!known || known.version !== from) return this.reopen(true);
    this.sagas.set(name, { value: applyDelta(known.value, ops), version: to });
    this.send((sagas) => sagas.has(name), { type: 'delta', name, from, to, ops });
  }
}
