/**
 * Milestones as lanes of task cards: state colour, attempt / delegation, agent profile, elapsed, tokens and
 * cost, the latest output line. Every field an agent wrote (title, error, reason, line) is a text node.
 */
import { Component, createRef, html } from './html.js';
import { duration, elapsed, usageLine } from './format.js';
import { unwatchNear, watchNear } from './near.js';

/**
 * The latest line to show: the running agent's live output line (the view's `agents`) first, else why the
 * task stopped or what it warns of; `error` says the line is the task's error.
 */
function lastLineOf(task, agent) {
  if (agent?.lastLine) return { text: agent.lastLine, error: false };
  const text = task.error || task.warning || task.reason || '';
  return { text, error: Boolean(task.error) };
}

function TaskCard({ task, agent, link, selected, onSelect }) {
  // A running agent's own numbers are live (its heartbeat); the task's are as of its latest handoff.
  const usage = agent?.usage || task.usage;
  const time =
    typeof agent?.elapsedMs === 'number' ? duration(agent.elapsedMs) : elapsed(task.startedAt, task.endedAt);
  const line = lastLineOf(task, agent);
  return html`<article
    class=${`task state-${task.status} ${selected ? 'selected' : ''}`}
    data-task=${task.id}
    data-status=${task.status}
    data-live=${agent ? 'true' : undefined}
    tabindex="0"
    onClick=${() => onSelect(task.id)}
    onKeyDown=${(e) => e.key === 'Enter' && onSelect(task.id)}
  >
    <header>
      <span class="ref">${task.id}</span>
      <span class="state">${task.status}</span>
    </header>
    <div class="title">${task.title}</div>
    <div class="facts muted">
      <span title="attempts / delegations"
        >attempt ${agent?.attempt ?? task.attempts} · delegation ${task.delegations ?? 0}</span
      >
      ${task.agent && html`<span class="agent">${task.agent.profile}</span>`}
      ${agent?.step && html`<span class="step" title="the agent's current step">${agent.step}</span>`}
      ${time && html`<span class="elapsed" title=${agent ? 'the running agent, so far' : 'its latest run'}>${time}</span>`}
      ${usage && html`<span class="usage" title=${`input / output tokens, cost${agent?.usage ? ' (live)' : ''}`}>${usageLine(usage)}</span>`}
    </div>
    ${line.text && html`<div class=${`line ${line.error ? 'error' : ''}`} title=${line.text}>${line.text}</div>`}
    ${link && html`<a class="wf-link" href=${link} target="_blank" rel="noopener noreferrer" onClick=${(e) => e.stopPropagation()}>workflow ↗</a>`}
  </article>`;
}

/** A card's width and the gap after it (saga.css `.task`, `.lane .cards`): spacers stand for unbuilt cards. */
const CARD_PX = 228;
/** Cards built beyond the visible part of a lane, so a short scroll finds them built. */
const AHEAD = 4;

/**
 * A milestone's lane: its header (with its counts) always; its cards only once the lane is near the
 * viewport, and then only as far as the lane is scrolled (a spacer stands for the rest, so the scrollbar is
 * right). A lane whose milestone, agents and selection did not change is not drawn again.
 */
class Lane extends Component {
  constructor() {
    super();
    this.lane = createRef();
    this.cards = createRef();
    this.spacer = createRef();
    this.state = { count: 0 };
  }

  componentDidMount() {
    watchNear(this.lane.current, () => {
      unwatchNear(this.lane.current);
      this.more();
    });
  }

  componentWillUnmount() {
    unwatchNear(this.lane.current);
    this.sideways?.disconnect();
  }

  /** Builds the cards up to the lane's scrolled-to right edge (and a few more), and watches its spacer. */
  more() {
    const box = this.cards.current;
    if (!box) return;
    const wanted = Math.ceil((box.scrollLeft + box.clientWidth) / CARD_PX) + AHEAD;
    const count = Math.min(this.props.milestone.tasks.length, Math.max(wanted, this.state.count + AHEAD));
    if (count !== this.state.count) this.setState({ count });
  }

  componentDidUpdate() {
    this.sideways?.disconnect();
    this.sideways = null;
    const spacer = this.spacer.current;
    if (!spacer) return;
    // Observing anew reports at once whether the spacer is (still) in view.
    this.sideways = new globalThis.IntersectionObserver(
      (entries) => entries.some((e) => e.isIntersecting) && this.more(),
      {
        root: this.cards.current,
        rootMargin: '0px 50%',
      },
    );
    this.sideways.observe(spacer);
  }

  shouldComponentUpdate(next, nextState) {
    const now = this.props;
    if (nextState.count !== this.state.count || next.milestone !== now.milestone) return true;
    if (next.onSelect !== now.onSelect) return true;
    if (nextState.count === 0) return false;
    const tasks = next.milestone.tasks.slice(0, nextState.count);
    // Every task that starts adds its workflow link: only this lane's own links matter to it.
    const links = [next.links?.tasks, now.links?.tasks];
    if (links[0] !== links[1] && tasks.some((t) => links[0]?.[t.id] !== links[1]?.[t.id])) return true;
    const mine = (ref) => ref !== undefined && tasks.some((t) => t.id === ref);
    if (next.selected !== now.selected && (mine(next.selected) || mine(now.selected))) return true;
    return (
      next.agents !== now.agents &&
      tasks.some((t) => t.status === 'running' && next.agents?.[t.id] !== now.agents?.[t.id])
    );
  }

  render({ milestone, agents, links, selected, onSelect }, { count }) {
    const tasks = milestone.tasks;
    const done = tasks.filter((t) => t.status === 'integrated').length;
    const rest = tasks.length - count;
    return html`<section
      ref=${this.lane}
      class=${`lane ms-${milestone.status}`}
      data-milestone=${milestone.id}
      data-tasks=${tasks.length}
      data-built=${count}
    >
      <header>
        <strong>M${milestone.id}</strong> <span>${milestone.title}</span>
        <span class="muted"> · ${milestone.status} · ${done}/${tasks.length}</span>
      </header>
      <div class="cards" ref=${this.cards} onScroll=${rest > 0 ? () => this.more() : undefined}>
        ${tasks
          .slice(0, count)
          .map(
            (task) =>
              html`<${TaskCard}
                key=${task.id}
                task=${task}
                agent=${task.status === 'running' ? agents?.[task.id] : undefined}
                link=${links?.tasks?.[task.id]}
                selected=${selected === task.id}
                onSelect=${onSelect}
              />`,
          )}
        ${
          rest > 0 &&
          html`<div
            class="unbuilt"
            ref=${this.spacer}
            style=${{ flex: `0 0 ${rest * CARD_PX}px`, minHeight: '84px' }}
          ></div>`
        }
      </div>
    </section>`;
  }
}

export function Lanes({ milestones, agents, links, selected, onSelect }) {
  if (!milestones.length) return html`<p class="muted">No tasks yet: the plan is not approved.</p>`;
  return html`<section class="lanes">
    <h2>Milestones</h2>
    ${milestones.map(
      (m) =>
        html`<${Lane}
          key=${m.id}
          milestone=${m}
          agents=${agents}
          links=${links}
          selected=${selected}
          onSelect=${onSelect}
        />`,
    )}
  </section>`;
}
