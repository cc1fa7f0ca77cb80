/**
 * `#/saga/NAME`: what the saga waits for on top, then goal, flags, the phase timeline, milestones as lanes,
 * the agent runs over time, the dependency graph, exit criteria, the pull requests (`delivery: pr`), the
 * selected task's transcript and diff, REPORT.md when done.
 */
import { Component, html } from './html.js';
import { progressOf, tokens } from './format.js';
import { PendingCards } from './pending.js';
import { Lanes } from './lanes.js';
import { RunTimeline } from './timeline.js';
import { Report, TaskDetail } from './detail.js';
import { CostBudget, ProgressBar } from './sagas-view.js';
import { PullRequests } from './pull-requests.js';
import { CancelSaga } from './steer.js';
import { WhenNear } from './near.js';

const TIMELINE = ['planning', 'implementation', 'validation', 'acceptance', 'complete'];
const FLAG_KEYS = ['quality_locked', 'autonomous', 'subagents', 'parallel'];

function PhaseTimeline({ phase, round }) {
  const at = TIMELINE.indexOf(phase);
  return html`<ol class="timeline" data-phase=${phase}>
    ${TIMELINE.map(
      (p, i) =>
        html`<li key=${p} class=${i < at || phase === 'complete' ? 'done' : i === at ? 'current' : 'todo'}>
          ${p}
        </li>`,
    )}
    ${at < 0 && html`<li class=${`current end-${phase}`}>${phase}</li>`}
    <li class="round muted">round ${round}</li>
  </ol>`;
}

function Flags({ flags }) {
  const on = FLAG_KEYS.filter((k) => flags?.[k]);
  return html`<div class="flags">
    ${on.length === 0 && html`<span class="muted">no flags</span>`}
    ${on.map(
      (k) =>
        html`<span key=${k} class="flag"
          >--${k.replace(/_/g, '-')}${k === 'parallel' && flags.parallel_lanes ? `=${flags.parallel_lanes}` : ''}</span
        >`,
    )}
  </div>`;
}

const VERDICTS = new Set(['passed', 'failed', 'not-checkable', 'by-hand', 'verified-by-user']);

/**
 * Exit criteria from the plan, each with the latest final validation's result at the same position
 * (`exitResults[i]`, in the plan's exit-criteria order): passed / failed / not-checkable and the evidence
 * path, as text; "not run" before the validation ran. Without the plan's list, the results alone.
 */
function ExitCriteria({ status }) {
  const results = Array.isArray(status.exitResults) ? status.exitResults : [];
  const criteria = status.planSummary?.exitCriteria?.length
    ? status.planSummary.exitCriteria
    : results.map((r) => r.id);
  if (!criteria.length) return '';
  const passed = results.filter((r) => r?.result === 'passed').length;
  return html`<section class="criteria">
    <h2>Exit criteria</h2>
    ${results.length > 0 && html`<p class="muted criteria-count">${passed}/${criteria.length} passed</p>`}
    <ul>
      ${criteria.map((text, i) => {
        const r = results[i];
        const verdict = r && VERDICTS.has(r.result) ? r.result : 'not-run';
        return html`<li key=${i} class=${`criterion ${verdict}`} data-result=${verdict}>
          <span class="verdict">${verdict.replace(/-/g, ' ')}</span>
          <span class="criterion-text">${text}</span>
          ${r?.evidence && html`<div class="evidence muted">evidence: <code>${r.evidence}</code></div>`}
        </li>`;
      })}
    </ul>
  </section>`;
}

/** The dependency graph, closed at first: graph.js (and dagre, ~90 KB) loads when it is first opened. */
class GraphBox extends Component {
  toggle(open) {
    this.setState({ open });
    if (!open || this.state.Graph) return;
    import('./graph.js').then(
      ({ DependencyGraph }) => this.setState({ Graph: DependencyGraph }),
      (err) => this.setState({ failed: err.message }),
    );
  }

  render({ milestones, onSelect }, { open, Graph, failed }) {
    if (!milestones.some((m) => m.tasks.length)) return '';
    const body = failed
      ? html`<p class="card-error">${failed}</p>`
      : Graph
        ? html`<${Graph} milestones=${milestones} onSelect=${onSelect} />`
        : html`<p class="muted">Loading the graph…</p>`;
    return html`<details class="graph-box" open=${open} onToggle=${(e) => this.toggle(e.currentTarget.open)}>
      <summary>Dependency graph</summary>
      ${open && body}
    </details>`;
  }
}

function Links({ links, status }) {
  return html`<div class="links">
    ${links?.saga && html`<a href=${links.saga} target="_blank" rel="noopener noreferrer">saga workflow ↗</a>`}
    ${links?.list && html`<a href=${links.list} target="_blank" rel="noopener noreferrer">all its workflows ↗</a>`}
    <span class="muted">${status.integrationBranch}</span>
  </div>`;
}

function Header({ status, links, budget }) {
  const { integrated, total } = progressOf(status);
  const usage = status.usage;
  return html`<section class="saga-head">
    <h1>${status.name} <span class=${`phase phase-${status.phase}`}>${status.phase}</span></h1>
    <p class="goal">${status.goal}</p>
    <${Flags} flags=${status.flags} />
    <${PhaseTimeline} phase=${status.phase} round=${status.round} />
    <div class="numbers">
      <${ProgressBar} done=${integrated} total=${total} />
      <${CostBudget} cost=${usage?.costUsd ?? 0} budget=${budget} />
      ${usage && html`<span class="muted">${tokens(usage.inputTokens)}↓ ${tokens(usage.outputTokens)}↑</span>`}
    </div>
    ${status.error && html`<p class="card-error">${status.error}</p>`}
    <${Links} links=${links} status=${status} />
    <${CancelSaga}
      key=${status.name}
      name=${status.name}
      running=${!['complete', 'cancelled', 'failed'].includes(status.phase)}
    />
  </section>`;
}

export function SagaView({ state, actions }) {
  const detail = state.detail;
  if (!detail) return html`<p class="muted">Loading ${state.route.name}…</p>`;
  const { status, links } = detail;
  // The saga budget from the status itself; the list entry's (same source) while a server sends none.
  const budget =
    status.budgetUsd !== undefined
      ? status.budgetUsd
      : (state.sagas?.find((s) => s.name === status.name)?.budgetUsd ?? null);
  return html`<div class="saga">
    <${PendingCards} pending=${status.pending} cards=${state.cards} actions=${actions} />
    <${Header} status=${status} links=${links} budget=${budget} />
    <div class="work">
      <div class="main-col">
        <${Lanes}
          milestones=${status.milestones}
          agents=${detail.agents}
          links=${links}
          selected=${state.task?.ref}
          onSelect=${actions.selectTask}
        />
        <${WhenNear} placeholder="runs-unbuilt">
          <${RunTimeline}
            milestones=${status.milestones}
            agents=${detail.agents}
            selected=${state.task?.ref}
            onSelect=${actions.selectTask}
          />
        <//>
        <${GraphBox} milestones=${status.milestones} onSelect=${actions.selectTask} />
        <${ExitCriteria} status=${status} />
        <${PullRequests} pullRequests=${status.pullRequests} />
        <${Report} report=${state.report} />
      </div>
      <${TaskDetail} task=${state.task} detail=${detail} onClose=${actions.selectTask} />
    </div>
    <section class="log">
      <h2>Log</h2>
      <pre>${status.log.slice(0, 20).join('\n')}</pre>
    </section>
  </div>`;
}
