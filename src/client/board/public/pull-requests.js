/**
 * The saga's pull requests (`status.pullRequests`, `delivery: pr`), bottom of the stack first: number and
 * link, head → base, draft/ready/merged, CI with the failing checks' names, the fixes run, and the review
 * comments listed but not acted on, with why. Nothing when the saga delivers locally. All forge text stays
 * text; the link is followed only when it is http(s).
 */
import { html } from './html.js';

const CI_TEXT = {
  success: 'CI passed',
  failure: 'CI failing',
  pending: 'CI pending',
  'no-ci': 'no CI reported',
};

function stage(pr) {
  if (pr.state !== 'open') return pr.state;
  return pr.draft ? 'draft' : 'ready';
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

function PrNumber({ pr }) {
  return /^https?:\/\//.test(pr.url)
    ? html`<a href=${pr.url} target="_blank" rel="noopener noreferrer">#${pr.number} ↗</a>`
    : html`<span>#${pr.number}</span>`;
}

function PullRequest({ pr }) {
  const failing = pr.ci === 'failure' && pr.failing?.length ? `: ${pr.failing.join(', ')}` : '';
  const fixes = [
    pr.ciFixes ? plural(pr.ciFixes, 'CI fix', 'CI fixes') : '',
    pr.reviewFixes ? plural(pr.reviewFixes, 'review fix', 'review fixes') : '',
  ].filter(Boolean);
  const comments = pr.listedComments ?? [];
  return html`<li class=${`pr stage-${stage(pr)} ci-${pr.ci}`} data-pr=${pr.number}>
    <${PrNumber} pr=${pr} />
    <span class="muted">${pr.milestone === null ? 'the saga' : `milestone ${pr.milestone}`}</span>
    <code class="pr-branches">${pr.head} → ${pr.base}</code>
    <span class="pr-stage">${stage(pr)}</span>
    <span class="pr-ci">${CI_TEXT[pr.ci] ?? pr.ci}${failing}</span>
    ${fixes.length > 0 && html`<span class="pr-fixes muted">${fixes.join(', ')}</span>`}
    ${
      comments.length > 0 &&
      html`<ul class="pr-comments">
        ${comments.map(
          (c) =>
            html`<li key=${c.id} class="muted">
              comment by ${c.author} on ${c.place}: not acted on (${c.why})
            </li>`,
        )}
      </ul>`
    }
  </li>`;
}

export function PullRequests({ pullRequests }) {
  if (!Array.isArray(pullRequests) || pullRequests.length === 0) return '';
  return html`<section class="pull-requests">
    <h2>Pull requests</h2>
    <ul>
      ${pullRequests.map((pr) => html`<${PullRequest} key=${pr.number} pr=${pr} />`)}
    </ul>
  </section>`;
}
