/**
 * Milestones as lanes of task cards: state colour, attempt / delegation, agent profile, elapsed, tokens and
 * cost, the latest output line. Every field an agent wrote (title, error, reason, line) is a text node.
 */
import { html } from './html.js';
import { elapsed, usageLine } from './format.js';

/** The latest line to show: the server's live line when it sends one, else why the task stopped. */
function lastLineOf(task) {
  return task.lastLine || task.error || task.warning || task.reason || '';
}

function TaskCard({ task, link, selected, onSelect }) {
  const usage = task.usage;
  const time = elapsed(task.startedAt, task.endedAt);
  const line = lastLineOf(task);
  return html`<article
    class=${`task state-${task.status} ${selected ? 'selected' : ''}`}
    data-task=${task.id}
    data-status=${task.status}
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
        >attempt ${task.attempts} · delegation ${task.delegations ?? 0}</span
      >
      ${task.agent && html`<span class="agent">${task.agent.profile}</span>`}
      ${time && html`<span>${time}</span>`}
      ${usage && html`<span title="input / output tokens, cost">${usageLine(usage)}</span>`}
    </div>
    ${line && html`<div class=${`line ${task.error ? 'error' : ''}`} title=${line}>${line}</div>`}
    ${link && html`<a class="wf-link" href=${link} target="_blank" rel="noopener noreferrer" onClick=${(e) => e.stopPropagation()}>workflow ↗</a>`}
  </article>`;
}

function Lane({ milestone, links, selected, onSelect }) {
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
            link=${links?.tasks?.[task.id]}
            selected=${selected === task.id}
            onSelect=${onSelect}
          />`,
      )}
    </div>
  </section>`;
}

export function Lanes({ milestones, links, selected, onSelect }) {
  if (!milestones.length) return html`<p class="muted">No tasks yet: the plan is not approved.</p>`;
  return html`<section class="lanes">
    <h2>Milestones</h2>
    ${milestones.map(
      (m) =>
        html`<${Lane} key=${m.id} milestone=${m} links=${links} selected=${selected} onSelect=${onSelect} />`,
    )}
  </section>`;
}
