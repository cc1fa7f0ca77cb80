/** `#/`: every saga, running first, with phase, progress, cost against budget and a waiting badge. */
import { html } from './html.js';
import { percent, usd } from './format.js';
import { NewSagaForm } from './new-saga.js';

export function ProgressBar({ done, total }) {
  const pct = percent(done, total);
  return html`<div class="progress" title=${`${done} of ${total} tasks integrated`}>
    <div class="bar" style=${`width:${pct}%`}></div>
    <span class="label">${done}/${total}</span>
  </div>`;
}

export function CostBudget({ cost, budget }) {
  const over = budget !== null && budget !== undefined && cost > budget;
  return html`<span class=${`cost ${over ? 'over' : ''}`}>
    ${usd(cost)}${budget !== null && budget !== undefined ? html` <span class="muted">/ ${usd(budget)}</span>` : ''}
  </span>`;
}

function SagaRow({ saga }) {
  const href = `#/saga/${encodeURIComponent(saga.name)}`;
  return html`<tr class=${`saga-row ${saga.running ? 'running' : 'ended'}`} data-saga=${saga.name}>
    <td>
      <a href=${href}>${saga.name}</a>
      ${
        saga.waiting > 0
          ? html` <span class="badge waiting" title="Waiting for a person">waiting · ${saga.waiting}</span>`
          : ''
      }
      <div class="goal muted">${saga.goal}</div>
    </td>
    <td><span class=${`phase phase-${saga.phase}`}>${saga.phase}</span></td>
    <td><${ProgressBar} done=${saga.integrated} total=${saga.total} /></td>
    <td><${CostBudget} cost=${saga.costUsd} budget=${saga.budgetUsd} /></td>
    <td class="muted">${saga.startedAt ? new Date(saga.startedAt).toLocaleString() : ''}</td>
  </tr>`;
}

/** The list (or why there is none), under the new-saga form, which stays mounted when the list changes. */
function SagaList({ sagas }) {
  if (!sagas) return html`<p class="muted">Loading sagas…</p>`;
  if (sagas.length === 0)
    return html`<p class="muted">No sagas yet: start one here or with <code>saga start</code>.</p>`;
  const ordered = [...sagas].sort((a, b) => Number(b.running) - Number(a.running));
  return html`<h1>Sagas</h1>
    <table class="sagas">
      <thead>
        <tr>
          <th>Saga</th>
          <th>Phase</th>
          <th>Integrated</th>
          <th>Cost / budget</th>
          <th>Started</th>
        </tr>
      </thead>
      <tbody>
        ${ordered.map((saga) => html`<${SagaRow} key=${saga.name} saga=${saga} />`)}
      </tbody>
    </table>`;
}

export function SagasView({ sagas }) {
  return html`<section>
    <${NewSagaForm} />
    <${SagaList} sagas=${sagas} />
  </section>`;
}
