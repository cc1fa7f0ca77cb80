/** One line per saga pull request, as the acceptance prompt, `saga status` and PROGRESS.md show it. */
import type { PullRequestStatus } from '../contract/state';

export function pullRequestLine(pr: PullRequestStatus): string {
  const what = pr.milestone === null ? 'all milestones' : `milestone ${pr.milestone}`;
  const state = pr.state === 'open' ? (pr.draft ? 'draft' : 'ready for review') : pr.state;
  const ci =
    pr.ci === 'failure' && pr.failing.length ? `CI failure (${pr.failing.join(', ')})` : `CI ${pr.ci}`;
  const fixes = pr.ciFixes + pr.reviewFixes;
  const parts = [
    `#${pr.number} ${what}, ${pr.head} → ${pr.base}: ${state}, ${ci}`,
    ...(fixes ? [`${pr.ciFixes} CI fix(es), ${pr.reviewFixes} review fix(es)`] : []),
    ...(pr.listedComments.length
      ? [
          `${pr.listedComments.length} comment(s) not acted on (${pr.listedComments
            .map((c) => `${c.author}: ${c.why}`)
            .join('; ')})`,
        ]
      : []),
  ];
  return `${parts.join(', ')} ${pr.url}`;
}
