/**
 * The delivery activities (`delivery: pr`): what the workflows ask of the forge and of the worker's git to
 * deliver a saga as pull requests. Each is idempotent, so a retry or `saga continue` repeats nothing: a PR is
 * found before one is created, a push of what is already there is a no-op, a merged PR is not merged again.
 * The token is read from the worker's environment (forge.token_env) at the moment of each call.
 */
import type { CiState, ForgeTarget, MergeMethod, PullRequest, ReviewComment } from './port';

/** Where the forge is and how the worker's git reaches it (the user's repository and its remote). */
export interface ForgeRef {
  repo: string;
  remote: string;
  target: ForgeTarget;
}

export interface DeliverMilestoneInput extends ForgeRef {
  /** The delivery branch (deliveryBranch, or the integration branch with `pr: single`). */
  head: string;
  /** The integrated commit it is set to. */
  headSha: string;
  base: string;
  title: string;
  /** The saga's part of the body (renderPrBody). */
  body: string;
}

export interface WatchedPr {
  number: number;
  headSha: string;
  /** The ETag of the last look at this head's CI (GitHub), for a conditional request. */
  etag: string | null;
}

export interface PullRequestLook {
  number: number;
  /** `not-modified`: the forge said nothing changed since `etag` (costs no rate limit on GitHub). */
  ci: CiState | 'not-modified';
  /** Every review comment on the PR, resolved ones included, with its author's rights. */
  comments: ReviewComment[];
  /** The PR as it is now (merged or closed by someone, its head moved by someone). */
  pullRequest: PullRequest;
}

export interface LandFixInput extends ForgeRef {
  /** The fix task's branch, started from `stack[at].head` as it was pushed. */
  fixBranch: string;
  /** The saga's delivery branches, bottom of the stack first (one entry with `pr: single`). */
  stack: { head: string; number: number }[];
  /** Which one the fix is for. */
  at: number;
  /** The saga's integration branch: moved (fast-forward) to the top of the stack once it holds the fix. */
  integrationBranch: string;
}

export interface LandFixResult {
  /** The new head commit of each delivery branch that moved (all pushed), by branch. */
  heads: Record<string, string>;
  /** The fix's commit on `stack[at].head` (what a review reply names). */
  commit: string;
}

export interface MergePullRequestsInput {
  target: ForgeTarget;
  /** Bottom of the stack first; each with the head commit the user saw (a moved head is not merged). */
  prs: { number: number; base: string; headSha: string }[];
  baseBranch: string;
  method: MergeMethod;
}

export interface MergePullRequestsResult {
  merged: number[];
  /** The first PR the forge refused to merge (branch protection, a failing required check), with its reason. */
  refused: { number: number; message: string } | null;
}

export interface ForgeActivities {
  /** Sets the delivery branch to `headSha`, pushes it and finds or opens its draft PR (openPullRequest). */
  deliverMilestone(input: DeliverMilestoneInput): Promise<PullRequest>;
  /** One look at each PR: its head's CI (conditional where the forge has it) and its review comments. */
  lookAtPullRequests(input: { target: ForgeTarget; prs: WatchedPr[] }): Promise<PullRequestLook[]>;
  /**
   * A fix task's branch onto its delivery branch (fast-forward), merged up the stack into every later
   * delivery branch, all pushed; the integration branch moved to the top. A conflict fails without pushing.
   */
  landFix(input: LandFixInput): Promise<LandFixResult>;
  /** A reply in the review comment's thread. */
  replyToReview(input: {
    target: ForgeTarget;
    number: number;
    comment: ReviewComment;
    body: string;
  }): Promise<void>;
  /** The saga's part of a PR's body replaced in place (mergePrBody); people's text stays. */
  updatePullRequestBody(input: { target: ForgeTarget; number: number; body: string }): Promise<PullRequest>;
  /** Drafts marked ready for review. */
  markReady(input: { target: ForgeTarget; numbers: number[] }): Promise<PullRequest[]>;
  /** Merges down the stack (mergeSteps) through the forge's merge API; stops at the first refusal. */
  mergePullRequests(input: MergePullRequestsInput): Promise<MergePullRequestsResult>;
}
