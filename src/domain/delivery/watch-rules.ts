/**
 * The delivery watch's rules (docs/PROCEDURE.md §13): what one look at the saga's pull requests changes in
 * their status, and which fix comes next. A failing check becomes a fix task once per failure (by
 * fingerprint), at most `ci_fix_attempts` times per PR before the user is asked; a review comment from
 * someone with write access becomes a fix task once; the rest is listed. Bottom of the stack first, CI
 * before review. Pure: the workflow keeps the state, activities do the looking.
 */
import { z } from 'zod';
import type { PullRequestStatus } from '../contract/state';
import type { Plan, PlanTask } from '../plan';
import { ciFixRequest, ciVerdict, failureFingerprint, newCiFailures } from './ci-watch';
import type { CiState, ForgeCheck, PullRequest, ReviewComment } from './forge-shapes';
import { commentPlace, reviewFixRequest, sortReviewComments, type ReviewBots } from './review-fixes';

/** What the watch remembers about one PR between looks (kept in the workflow, carried over continue-as-new). */
export interface PrWatch {
  number: number;
  /** The head the looks below are about; a new head starts the backoff again. */
  headSha: string;
  etag: string | null;
  looks: number;
  /** Workflow time (ms) the head was first looked at: a head without any check for long has no CI. */
  sinceMs: number;
  /** The head's CI as last read (a `not-modified` answer keeps it). */
  lastCi: CiState | null;
  /** Review comments on the PR as last read. */
  comments: ReviewComment[];
  /** The PR's review comment count when they were read (null: not known; read them next time). */
  commentCount?: number | null;
}

/** The watch on a new head (first seen, pushed by a fix or by someone): backoff, ETag and silence start over. */
export const watchOnHead = (
  watch: Pick<PrWatch, 'number'> & Partial<PrWatch>,
  headSha: string,
  nowMs: number,
): PrWatch => ({
  comments: [],
  ...watch,
  headSha,
  etag: null,
  looks: 0,
  sinceMs: nowMs,
  lastCi: null,
});

/**
 * What the saga's delivery watches have done, across PRs, watches and rounds (the saga keeps it): failures
 * sent to a fix task or left alone, comments handled, and how many fix tasks there were.
 */
export const WatchMemorySchema = z.object({
  seenFailures: z.array(z.string()),
  handledComments: z.array(z.number().int()),
  /** Extra CI fix attempts the user granted, by PR number (`fix again`). */
  extraCiFixes: z.record(z.string(), z.number().int()),
  /** Fix tasks started so far: numbers their keys, so no two share a branch. */
  fixes: z.number().int().nonnegative(),
  /** Questions asked about the CI fix cap so far: numbers their ids, so each is asked anew. */
  capQuestions: z.number().int().nonnegative(),
});
export type WatchMemory = z.infer<typeof WatchMemorySchema>;

export const emptyWatchMemory = (): WatchMemory => ({
  seenFailures: [],
  handledComments: [],
  extraCiFixes: {},
  fixes: 0,
  capQuestions: 0,
});

export interface LookResult {
  ci: CiState | 'not-modified';
  /** `unchanged`: not read again, the PR's comment count being what the last read saw. */
  comments: ReviewComment[] | 'unchanged';
  pullRequest: PullRequest;
}

/** The PR's status and watch after a look at `nowMs`. */
export function applyLook(
  pr: PullRequestStatus,
  watch: PrWatch,
  look: LookResult,
  nowMs: number,
  opts: { reviewBots: ReviewBots; memory: WatchMemory },
): { pr: PullRequestStatus; watch: PrWatch } {
  const headMoved = look.pullRequest.headSha !== watch.headSha;
  const base: PrWatch = headMoved ? watchOnHead(watch, look.pullRequest.headSha, nowMs) : watch;
  // A look read the CI of the head it was given: after someone moved the head, that answer is stale.
  const ci = look.ci === 'not-modified' || look.ci.sha !== base.headSha ? base.lastCi : look.ci;
  const next: PrWatch = {
    ...base,
    looks: base.looks + 1,
    etag: look.ci === 'not-modified' ? base.etag : look.ci.etag,
    lastCi: ci,
    ...(look.comments === 'unchanged'
      ? {}
      : { comments: look.comments, commentCount: look.pullRequest.reviewCommentCount ?? null }),
  };
  const verdict = ci ? ciVerdict(ci, nowMs - next.sinceMs) : 'wait';
  const sorted = sortReviewComments(next.comments, {
    reviewBots: opts.reviewBots,
    handled: opts.memory.handledComments,
  });
  return {
    watch: next,
    pr: {
      ...pr,
      headSha: look.pullRequest.headSha,
      draft: look.pullRequest.draft,
      state: look.pullRequest.state,
      base: look.pullRequest.base,
      ci:
        verdict === 'green'
          ? 'success'
          : verdict === 'failed'
            ? 'failure'
            : verdict === 'no-ci'
              ? 'no-ci'
              : 'pending',
      failing: (ci?.checks ?? []).filter((c) => c.state === 'failure').map((c) => c.name),
      listedComments: sorted.listed.map(({ comment, why }) => ({
        id: comment.id,
        author: comment.author,
        place: commentPlace(comment),
        why,
      })),
    },
  };
}

export type FixWork =
  | { kind: 'ci'; pr: number; check: ForgeCheck; sha: string; fingerprint: string; request: string }
  | { kind: 'review'; pr: number; comment: ReviewComment; request: string }
  /** A new failure after `ci_fix_attempts` fixes: the user decides. */
  | { kind: 'ci-cap'; pr: number; check: ForgeCheck; sha: string; fingerprint: string };

/** The next fix to make, bottom of the stack first, CI before review; null when there is none. */
export function nextFix(
  prs: readonly PullRequestStatus[],
  watches: readonly PrWatch[],
  memory: WatchMemory,
  opts: { ciFixAttempts: number; reviewBots: ReviewBots },
): FixWork | null {
  for (const pr of prs) {
    if (pr.state !== 'open') continue;
    const watch = watches.find((w) => w.number === pr.number);
    const ci = watch?.lastCi;
    if (!watch || !ci || ci.sha !== watch.headSha) continue;
    const failure = newCiFailures(ci, memory.seenFailures)[0];
    if (failure) {
      const fingerprint = failureFingerprint(ci.sha, failure);
      const cap = opts.ciFixAttempts + (memory.extraCiFixes[String(pr.number)] ?? 0);
      if (pr.ciFixes >= cap)
        return { kind: 'ci-cap', pr: pr.number, check: failure, sha: ci.sha, fingerprint };
      return {
        kind: 'ci',
        pr: pr.number,
        check: failure,
        sha: ci.sha,
        fingerprint,
        request: ciFixRequest(failure, ci.sha),
      };
    }
  }
  for (const pr of prs) {
    if (pr.state !== 'open') continue;
    const watch = watches.find((w) => w.number === pr.number);
    if (!watch) continue;
    const act = sortReviewComments(watch.comments, {
      reviewBots: opts.reviewBots,
      handled: memory.handledComments,
    }).act[0];
    if (act) return { kind: 'review', pr: pr.number, comment: act, request: reviewFixRequest(act) };
  }
  return null;
}

type Check = PlanTask['validation'][number];

/**
 * The checks a fix on each PR is judged by, by PR number: those of its milestone and of the milestones
 * below it in the stack (their tasks' and their own), which hold on its branch; the one PR of `pr: single`
 * has the exit criteria. A CI check itself runs on the forge, after the push.
 */
export function fixChecks(
  plan: Pick<Plan, 'exit_criteria' | 'milestones'>,
  prs: readonly Pick<PullRequestStatus, 'number' | 'milestone'>[],
): Record<string, Check[]> {
  const byCommand = (checks: Check[]): Check[] => [...new Map(checks.map((c) => [c.check, c])).values()];
  const exit = plan.exit_criteria.filter((c) => !c.by_hand).map((c) => ({ text: c.text, check: c.check }));
  const result: Record<string, Check[]> = {};
  prs.forEach((pr, i) => {
    if (pr.milestone === null) {
      result[String(pr.number)] = byCommand(exit);
      return;
    }
    const ids = new Set(prs.slice(0, i + 1).map((p) => p.milestone));
    const milestones = plan.milestones.filter((m) => ids.has(m.id));
    result[String(pr.number)] = byCommand(
      milestones.flatMap((m) => [...m.validation, ...m.tasks.flatMap((t) => t.validation)]),
    );
  });
  return result;
}

/** The fix task's spec: the request as its scope, judged by `checks` (fixChecks), and it must change files. */
export function fixTaskSpec(
  work: Extract<FixWork, { kind: 'ci' | 'review' }>,
  n: number,
  checks: readonly Check[],
): PlanTask {
  const what =
    work.kind === 'ci' ? `CI check ${work.check.name}` : `review comment on ${commentPlace(work.comment)}`;
  return {
    id: n,
    slug: work.kind === 'ci' ? `ci-fix-${n}` : `review-fix-${n}`,
    title: `Fix ${what}`.slice(0, 200),
    depends_on: [],
    scope: work.request,
    owns: [],
    interfaces: '',
    validation_method: "the checks of the PR's milestones here, then the forge's CI on the pushed commit",
    // A plan always has checks; an empty list would make a task no check can fail, so git's own is kept.
    validation: checks.length
      ? [...checks]
      : [{ text: 'the branch is a git work tree', check: 'git status --short' }],
    evidence: 'The changed files and the check output after the fix.',
    requires_changes: true,
  };
}
