/**
 * Desktop notifications (README "The saga board"): permission is asked for once, by a click (never on
 * load); a notification is shown when a saga starts waiting (a pending interaction opened after they were
 * turned on), with its question as plain text, once per interaction across the browser's tabs (a Web Lock
 * around a list in window.localStorage); a click focuses the board and opens that saga's card. They go through the
 * board's service worker (sw.js), which handles the click and tells the page which card to open.
 */
import { Component, html } from './html.js';
import { fetchSagaList, fetchSagaView } from './api.js';

const SINCE_KEY = 'saga-board-notify-since';
const SHOWN_KEY = 'saga-board-notified';
const MAX_REMEMBERED = 500;
const MAX_BODY = 300;
const OPEN_CARD = 'saga-board-open-card';
const SAGA_NAME = /^[a-z0-9][a-z0-9-]{0,99}$/;

/** Service workers and notifications need a secure context: https, or the board on localhost / 127.0.0.1. */
export const notificationsSupported = () =>
  window.isSecureContext && 'serviceWorker' in window.navigator && 'Notification' in window;
const since = () => window.localStorage.getItem(SINCE_KEY);
export const notificationsOn = () =>
  notificationsSupported() && window.Notification.permission === 'granted' && since() !== null;

let ready = null;
const worker = () =>
  (ready ??= window.navigator.serviceWorker
    .register('/sw.js')
    .then(() => window.navigator.serviceWorker.ready));

/** Agent-written text as one plain line: no controls or direction overrides, bounded. */
export function plainText(text, max = MAX_BODY) {
  const flat = String(text ?? '')
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One notification per interaction in this browser, whichever tab sees it first. */
async function showOnce(saga, interaction) {
  const key = `${saga}/${interaction.id}/${interaction.openedAt}`;
  const show = async () => {
    const shown = JSON.parse(window.localStorage.getItem(SHOWN_KEY) || '[]');
    if (shown.includes(key)) return;
    window.localStorage.setItem(SHOWN_KEY, JSON.stringify([...shown, key].slice(-MAX_REMEMBERED)));
    const registration = await worker();
    await registration.showNotification(`Saga ${saga} waits for you (${plainText(interaction.kind, 40)})`, {
      body: plainText(interaction.prompt),
      tag: key,
      data: { saga, interaction: interaction.id },
    });
  };
  await (window.navigator.locks ? window.navigator.locks.request('saga-board-notify', show) : show());
}

/** Each saga's pending count as its last read view showed it, and the list's latest count. */
const viewed = new Map();
const listed = new Map();
const reading = new Set();
const queued = new Set();
/** Sagas whose status this page receives anyway (the one it shows): no extra read for them. */
const statusSeen = new Map();
const STATUS_FRESH_MS = 5_000;
const RECHECK_MS = 2_000;
const RECHECKS = 5;
const MAX_READING = 2;

/** A saga's status as the page receives it: each pending interaction opened since notifications were on. */
export function noticeStatus(detail) {
  if (!notificationsOn() || !detail?.status) return;
  const { name, pending } = detail.status;
  statusSeen.set(name, Date.now());
  viewed.set(name, (pending ?? []).length);
  const from = Date.parse(since());
  for (const interaction of pending ?? [])
    if (Date.parse(interaction.openedAt) >= from) showOnce(name, interaction).catch(console.error);
}

/**
 * A saga's view read for its questions, when the list's count differs from the last view's. The list may
 * run ahead of (or behind) the view; the list sends nothing while it stays the same, so a disagreement is
 * read again a few times.
 */
function readWaiting(name, tries = RECHECKS) {
  if (reading.has(name) || queued.has(name)) return;
  // A few at a time: the browser has six connections to the board, and the page needs some of them.
  if (reading.size >= MAX_READING) {
    queued.add(name);
    setTimeout(() => {
      queued.delete(name);
      readWaiting(name, tries);
    }, RECHECK_MS);
    return;
  }
  reading.add(name);
  fetchSagaView(name)
    .then(
      (view) => {
        noticeStatus(view);
        viewed.set(name, view.status.pending.length);
      },
      () => undefined,
    )
    .finally(() => {
      reading.delete(name);
      if (tries > 1 && listed.get(name) > 0 && listed.get(name) !== viewed.get(name))
        setTimeout(() => readWaiting(name, tries - 1), RECHECK_MS);
    });
}

/**
 * The list: a saga whose waiting count changed, with a question opened since notifications were turned on,
 * has its questions read (the list has only counts and the newest question's time). Sagas that were already
 * waiting cost no read: a server with many of them (their workers perhaps gone, each read a 10 s wait) must
 * not queue this page's requests behind theirs.
 */
export function noticeSagas(sagas) {
  if (!notificationsOn() || !Array.isArray(sagas)) return;
  const from = Date.parse(since());
  for (const saga of sagas) {
    listed.set(saga.name, saga.running ? saga.waiting : 0);
    if (!saga.running || saga.waiting === 0 || saga.waiting === viewed.get(saga.name)) continue;
    if (!saga.waitingSince || Date.parse(saga.waitingSince) < from) continue;
    if (Date.now() - (statusSeen.get(saga.name) ?? 0) < STATUS_FRESH_MS) continue;
    readWaiting(saga.name);
  }
}

const HIDDEN_POLL_MS = 5_000;
let polling = null;
const hidden = () => document.visibilityState === 'hidden';

/**
 * A hidden tab lets go of its event stream (app.js), so one hidden tab per browser (a Web Lock) reads the
 * list now and then instead: a saga that starts waiting while nobody looks is still notified.
 */
function pollWhileHidden() {
  if (polling || !hidden() || !notificationsOn()) return;
  const loop = async () => {
    while (hidden() && notificationsOn()) {
      await fetchSagaList().then(
        ({ sagas }) => noticeSagas(sagas),
        () => undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, HIDDEN_POLL_MS));
    }
  };
  const locks = window.navigator.locks;
  polling = (locks ? locks.request('saga-board-hidden-poll', loop) : loop()).finally(() => (polling = null));
}

/** Where a notification's click leads: that saga's page, its card scrolled to and focused. */
export function openCard(saga, interactionId) {
  if (!SAGA_NAME.test(saga) || typeof interactionId !== 'string') return;
  const hash = `#/saga/${encodeURIComponent(saga)}`;
  if (location.hash !== hash) location.hash = hash;
  window.focus();
  const started = Date.now();
  const look = () => {
    const card = document.querySelector(`[data-interaction="${window.CSS.escape(interactionId)}"]`);
    if (card) {
      card.setAttribute('data-opened', 'true');
      card.scrollIntoView({ block: 'center' });
      card.focus({ preventScroll: true });
    } else if (Date.now() - started < 15_000) setTimeout(look, 200);
  };
  look();
}

/** At load: the worker's "open this card" messages, and `?card=ID` of a window the worker opened. */
export function startNotifications() {
  if (!notificationsSupported()) return;
  window.navigator.serviceWorker.addEventListener('message', (event) => {
    if (event.data?.type === OPEN_CARD) openCard(event.data.saga, event.data.interaction);
  });
  window.navigator.serviceWorker.startMessages();
  if (notificationsOn()) worker().catch(console.error);
  document.addEventListener('visibilitychange', pollWhileHidden);
  const params = new URLSearchParams(location.search);
  const card = params.get('card');
  if (card) {
    params.delete('card');
    const query = params.toString();
    window.history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
    const route = /^#\/saga\/(.+)$/.exec(location.hash);
    if (route) openCard(decodeURIComponent(route[1]), card);
  }
}

/** The header's switch: asks for permission on a click only; "blocked" when the browser said no. */
export class NotifySwitch extends Component {
  async enable() {
    const permission = await window.Notification.requestPermission();
    if (permission === 'granted') {
      window.localStorage.setItem(SINCE_KEY, new Date().toISOString());
      await worker().catch(console.error);
    }
    this.forceUpdate();
  }

  disable() {
    window.localStorage.removeItem(SINCE_KEY);
    this.forceUpdate();
  }

  render() {
    if (!notificationsSupported()) return '';
    if (notificationsOn())
      return html`<span class="notify-on"
        >notifications on
        <button type="button" class="secondary notify-off" onClick=${() => this.disable()}>off</button></span
      >`;
    if (window.Notification.permission === 'denied')
      return html`<span class="muted notify-blocked" title="Allow them in the browser's site settings"
        >notifications blocked</span
      >`;
    return html`<button type="button" class="notify-enable" onClick=${() => this.enable()}>
      Notify me when a saga waits
    </button>`;
  }
}
