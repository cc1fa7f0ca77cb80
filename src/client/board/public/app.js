/**
 * The saga board page: one store, hash routes (`#/` the sagas, `#/saga/NAME` one saga), server-sent events
 * (one stream shared by the browser's board tabs, api.js) that replace polling; every event re-renders.
 */
import { html, render } from './html.js';
import {
  adoptToken,
  fetchDiff,
  fetchReport,
  fetchTranscript,
  openEvents,
  respond,
  saveToken,
} from './api.js';
import { SagasView } from './sagas-view.js';
import { SagaView } from './saga-view.js';
import { noticeSagas, noticeStatus, NotifySwitch, startNotifications } from './notify.js'; // steer: notifications

const state = {
  route: { view: 'list' },
  sagas: null,
  detail: null,
  live: false,
  token: null,
  cards: {},
  task: null,
  report: null,
};
let events = null;

function update(patch) {
  Object.assign(state, patch);
  render(html`<${Page} state=${state} actions=${actions} />`, document.getElementById('app'));
}

function card(id, patch) {
  update({ cards: { ...state.cards, [id]: { ...state.cards[id], ...patch } } });
}

function routeOf(hash) {
  const match = /^#\/saga\/(.+)$/.exec(hash);
  return match ? { view: 'saga', name: decodeURIComponent(match[1]) } : { view: 'list' };
}

function onStatus(detail) {
  noticeStatus(detail); // steer: a notification when it starts waiting
  const first = !state.detail;
  update({ detail });
  if (detail.status.phase === 'complete' && !state.report) loadReport(detail.status.name);
  const task = state.task;
  if (task && !first && isRunning(detail, task.ref)) loadTranscript(detail.status.name, task.ref);
}

function isRunning(detail, ref) {
  return detail.status.milestones.some((m) => m.tasks.some((t) => t.id === ref && t.status === 'running'));
}

function listen() {
  events?.close();
  const { route } = state;
  events = openEvents(route.view === 'saga' ? route.name : null, {
    onSagas: (list) => {
      noticeSagas(list.sagas); // steer: a notification when a saga starts waiting
      update({ sagas: list.sagas });
    },
    onStatus,
    onLive: (live) => state.live !== live && update({ live }),
  });
}

function navigate() {
  update({ route: routeOf(location.hash), detail: null, task: null, report: null, cards: {}, live: false });
  listen();
}

/**
 * A hidden tab lets go of its topics and draws nothing (the shared stream closes when no tab shows
 * anything); shown again, it gets the latest whole view at once.
 */
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') listen();
  else {
    events?.close();
    events = null;
    update({ live: false });
  }
});

async function loadReport(name) {
  update({ report: { markdown: null, loading: true } });
  try {
    const { markdown } = await fetchReport(name);
    update({ report: { markdown } });
  } catch (err) {
    update({ report: { markdown: null, error: err.message } });
  }
}

async function loadTranscript(name, ref) {
  try {
    const { lines } = await fetchTranscript(name, ref);
    if (state.task?.ref === ref) update({ task: { ...state.task, lines } });
  } catch (err) {
    if (state.task?.ref === ref) update({ task: { ...state.task, transcriptError: err.message } });
  }
}

async function loadDiff(name, ref) {
  try {
    const { diff } = await fetchDiff(name, ref);
    if (state.task?.ref === ref) update({ task: { ...state.task, diff } });
  } catch (err) {
    if (state.task?.ref === ref) update({ task: { ...state.task, diffError: err.message } });
  }
}

const actions = {
  setToken(token) {
    saveToken(token);
    update({ token });
    listen(); // reads need the token too: the stream opened without it was refused
  },
  setText(id, text) {
    state.cards = { ...state.cards, [id]: { ...state.cards[id], text } }; // no re-render per keystroke
  },
  async answer(interaction, choice) {
    const name = state.route.name;
    const text = (state.cards[interaction.id]?.text || '').trim();
    if (!state.token) return card(interaction.id, { error: 'Enter the board token first (top right).' });
    if (interaction.textRequiredFor?.includes(choice) && !text) {
      return card(interaction.id, { error: `'${choice}' needs a text: write it in the field first.` });
    }
    card(interaction.id, { busy: true, error: null });
    const result = await respond(name, state.token, { interactionId: interaction.id, choice, text });
    if (result.ok) card(interaction.id, { busy: false, answered: choice });
    else card(interaction.id, { busy: false, error: result.error });
  },
  selectTask(ref) {
    if (state.task?.ref === ref) return update({ task: null });
    update({ task: { ref, lines: null, diff: null } });
    loadTranscript(state.route.name, ref);
    loadDiff(state.route.name, ref);
  },
};

function TokenField({ token, actions: act }) {
  if (token)
    return html`<span class="token-ok" title="Reads and answers are sent with this token">token set</span>`;
  const submit = (event) => {
    event.preventDefault();
    const value = event.target.elements.token.value.trim();
    if (value) act.setToken(value);
  };
  return html`<form class="token-form" onSubmit=${submit}>
    <input name="token" type="password" placeholder="board token" aria-label="board token" />
    <button type="submit">Use</button>
  </form>`;
}

function Page({ state: s, actions: act }) {
  const body =
    s.route.view === 'saga'
      ? html`<${SagaView} state=${s} actions=${act} />`
      : !s.token && !s.sagas
        ? html`<p class="muted token-needed">
            Enter the board token (top right): the board shows sagas only with it.
          </p>`
        : html`<${SagasView} sagas=${s.sagas} />`;
  return html`<header class="top">
      <a class="brand" href="#/">Saga board</a>
      <span class=${`live ${s.live ? 'on' : 'off'}`}>${s.live ? 'live' : 'connecting…'}</span>
      <${NotifySwitch} />
      <${TokenField} token=${s.token} actions=${act} />
    </header>
    <main>${body}</main>`;
}

globalThis.performance.mark('saga-board:modules'); // every module loaded: what bench/board.ts times
state.token = adoptToken();
document.getElementById('app').textContent = ''; // the static placeholder: preact appends to what it finds
window.addEventListener('hashchange', navigate);
navigate();
startNotifications(); // steer: the service worker's "open this card" messages
