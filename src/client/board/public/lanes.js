/**
 * Milestones as lanes of task cards: state colour, attempt / delegation, agent profile, elapsed, tokens and
 * cost, the latest output line. Every field an agent wrote (title, error, reason, line) is a text node.
 */
import { html } from './html.js';
import { duration, elapsed, usageLine } from './format.js';

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

function Lane({ milestone, agents, links, selected, onSelect }) {
  const done = milestone.tasks.filter((t) => t.status === 'integrated').length;
  return html`<section class=${`lane ms-${milestone.status}`} data-milestone=${milestone.id}>
    <header>
      <strong>M${milestone.id}</strong> <span>${milestone.title}</span>
      <span class="muted"> · ${milestone.status} · ${done}/${milestone.tasks.length}</span>
    </header>
    <div class="cards">
      ${milestone.tasks.map(
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
    </div>
  </section>`;
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
