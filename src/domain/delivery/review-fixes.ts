/**
 * Review comments on a saga's pull request: which become fix tasks (unresolved, not yet handled, by someone
 * who may push to the repository, and by a person unless `review_bots: act`) and which are only listed in
 * status, with the reason. A comment is untrusted text: it reaches an agent without terminal controls.
 */
import { cappedLine } from '../text/caps';
import { stripControls } from '../text/terminal';
import type { ReviewComment } from './forge-shapes';

// The `review_bots` key's values are the config's (domain/config/delivery-keys.ts).
import type { ReviewBots } from '../config/delivery-keys';
export { REVIEW_BOTS, type ReviewBots } from '../config/delivery-keys';

export interface ListedComment {
  comment: ReviewComment;
  why: 'no write access' | 'from a bot';
}

export interface SortedComments {
  act: ReviewComment[];
  listed: ListedComment[];
}

/** Sorts `comments` into those the fleet acts on and those only listed; resolved and handled ones are dropped. */
export function sortReviewComments(
  comments: readonly ReviewComment[],
  opts: { reviewBots: ReviewBots; handled: readonly number[] },
): SortedComments {
  const handled = new Set(opts.handled);
  const sorted: SortedComments = { act: [], listed: [] };
  for (const comment of comments) {
    if (comment.resolved || handled.has(comment.id) || comment.body.includes(SAGA_REPLY_MARKER)) continue;
    if (comment.isBot && opts.reviewBots !== 'act') sorted.listed.push({ comment, why: 'from a bot' });
    else if (!comment.authorCanWrite) sorted.listed.push({ comment, why: 'no write access' });
    else sorted.act.push(comment);
  }
  return sorted;
}

/** Where a comment points: `path:line`, `path`, or the PR as a whole. */
export function commentPlace(comment: ReviewComment): string {
  if (!comment.path) return 'the pull request';
  return comment.line ? `${comment.path}:${comment.line}` : comment.path;
}

/** The fix task's request for a review comment: `path:line — comment`, on the head commit it was left on. */
export function reviewFixRequest(comment: ReviewComment): string {
  const who = cappedLine(stripControls(comment.author), 100);
  return [
    `Review comment by ${who} on ${commentPlace(comment)} (commit ${comment.commitSha.slice(0, 12)}):`,
    `${commentPlace(comment)} — ${stripControls(comment.body).slice(0, 4_000)}`,
    'Address it; keep the change to what the comment asks.',
  ].join('\n');
}

/**
 * Marks the saga's own replies: they are review comments too, by the token's user (who has write access),
 * and must never become fix tasks. Someone who copies the marker only keeps their own comment from being
 * acted on.
 */
export const SAGA_REPLY_MARKER = '<!-- saga:reply -->';

/** The reply left in the comment's thread once its fix is pushed. */
export const fixedReply = (commitSha: string): string =>
  `Addressed in ${commitSha.slice(0, 12)} by the saga's fix task.\n\n${SAGA_REPLY_MARKER}`;
