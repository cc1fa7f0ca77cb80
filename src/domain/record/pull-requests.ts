/**
 * How a saga's pull requests (`status.pullRequests`, `delivery: pr`) read wherever a person looks: the
 * terminal (`saga status`), PROGRESS.md and REPORT.md. One wording for all three: number and link,
 * head → base, draft/ready/merged, CI with the failing checks' names, the fixes run, and the review comments
 * listed but not acted on, with why. Pure; nothing here when a saga has no pull requests.
 */
import type { PullRequestStatus } from '../contract/state';
import { bullets, code, oneLine, section } from './markdown';

/** draft / ready / merged / closed: what a reviewer asks first. */
export function pullRequestStage(pr: PullRequestStatus): 'draft' | 'ready' | 'merged' | 'closed' {
  if (pr.state !== 'open') return pr.state;
  return pr.draft ? 'draft' : 'ready';
}

export function ciText(pr: PullRequestStatus): string {
  switch (pr.ci) {
    case 'success':
      return 'CI passed';
    case 'failure':
      return pr.failing.length ? `CI failing: ${pr.failing.join(', ')}` : 'CI failing';
    case 'no-ci':
      return 'no CI reported';
    default:
      return 'CI pending';
  }
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** What the saga did on it: the CI and review fixes, when any ran. */
function fixesText(pr: PullRequestStatus): string[] {
  return [
    pr.ciFixes ? plural(pr.ciFixes, 'CI fix', 'CI fixes') : '',
    pr.reviewFixes ? plural(pr.reviewFixes, 'review fix', 'review fixes') : '',
  ].filter(Boolean);
}

const whose = (pr: PullRequestStatus): string =>
  pr.milestone === null ? 'the saga' : `milestone ${pr.milestone}`;

/** The facts after the number, in order: head → base, stage, CI, fixes. */
export function pullRequestFacts(pr: PullRequestStatus): string[] {
  return [`${pr.head} → ${pr.base}`, pullRequestStage(pr), ciText(pr), ...fixesText(pr)];
}

const listedText = (c: PullRequestStatus['listedComments'][number]): string =>
  `${c.author} on ${c.place}: not acted on (${c.why})`;

/** `saga status`: a block of plain lines (the caller strips terminal controls from the whole view). */
export function pullRequestStatusLines(prs: readonly PullRequestStatus[] | undefined): string[] {
  if (!prs?.length) return [];
  const lines = ['Pull requests:'];
  for (const pr of prs) {
    lines.push(`  #${pr.number} (${whose(pr)}) ${pullRequestFacts(pr).join(', ')}`, `    ${pr.url}`);
    for (const c of pr.listedComments) lines.push(`    comment by ${listedText(c)}`);
  }
  return lines;
}

/** The PR's number as a link when its URL is http(s); otherwise the URL is shown as code, never followed. */
function numberLink(pr: PullRequestStatus): string {
  if (!/^https?:\/\/[^\s]+$/.test(pr.url)) return `#${pr.number} ${code(pr.url)}`;
  const safe = pr.url.replace(/[()<>[\]]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `[#${pr.number}](${safe})`;
}

/** One Markdown bullet per PR, its listed comments nested under it. */
export function pullRequestBullets(prs: readonly PullRequestStatus[]): string {
  return prs
    .map((pr) => {
      const facts = pullRequestFacts(pr).map((f, i) => (i === 0 ? `${code(pr.head)} → ${code(pr.base)}` : f));
      const head = `- ${numberLink(pr)} (${whose(pr)}): ${facts.map(oneLine).join(' · ')}`;
      const comments = pr.listedComments.map((c) => `  - comment by ${oneLine(listedText(c))}`);
      return [head, ...comments].join('\n');
    })
    .join('\n');
}

/** The `## Pull requests` section of PROGRESS.md and REPORT.md; empty (left out) without pull requests. */
export function pullRequestsSection(prs: readonly PullRequestStatus[] | undefined): string {
  if (!prs?.length) return '';
  return section('Pull requests', pullRequestBullets(prs) || bullets([]));
}
