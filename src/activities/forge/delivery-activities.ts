/**
 * The delivery activities (`delivery: pr`): what the workflows ask of the forge and of the worker's git to
 * deliver a saga as pull requests. Each is idempotent, so a retry or `saga continue` repeats nothing: a PR is
 * found before one is created, a push of what is already there is a no-op, a merged PR is not merged again.
 * The token is read from the worker's environment (forge.token_env) at the moment of each call.
 */
import { mergePrBody } from '../../domain/delivery/pr-body';
import { parseInput } from '../git-ops/schemas';
import { asDeliveryActivity } from './delivery-failure';
import {
  DeliverMilestoneInputSchema,
  LandFixInputSchema,
  LookInputSchema,
  MarkReadyInputSchema,
  MergeInputSchema,
  ReplyInputSchema,
  UpdateBodyInputSchema,
} from './delivery-inputs';
import { landFixIn } from './land-fix';
import { mergeStack } from './merge-stack';
import { forgeOf, openPullRequest } from './open-pull-request';
import type { CiState, Forge, ForgeTarget, MergeMethod, PullRequest, ReviewComment } from './port';

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

export interface ForgeActivityDeps {
  /** The worker's environment as it is at the moment of each call (the token is read then); tests inject one. */
  env?: () => NodeJS.ProcessEnv;
  /** The adapter for a target; forgeOf unless a test counts calls through its own. */
  forgeFor?: (target: ForgeTarget, env: NodeJS.ProcessEnv) => Forge;
}

/** The delivery activities, served on the host queue (landFix and deliverMilestone use the user's repository). */
export function createForgeActivities(deps: ForgeActivityDeps = {}): ForgeActivities {
  const env = deps.env ?? (() => process.env);
  const forgeFor = deps.forgeFor ?? forgeOf;
  const forge = (target: ForgeTarget) => forgeFor(target, env());
  return {
    deliverMilestone: (raw) =>
      asDeliveryActivity('deliverMilestone', () => {
        const input = parseInput('deliverMilestone', DeliverMilestoneInputSchema, raw);
        return openPullRequest({ ...input, draft: true }, env(), forge(input.target));
      }),

    lookAtPullRequests: (raw) =>
      asDeliveryActivity('lookAtPullRequests', async () => {
        const input = parseInput('lookAtPullRequests', LookInputSchema, raw);
        const adapter = forge(input.target);
        const looks: PullRequestLook[] = [];
        // A reviewer of several PRs of the stack is asked about once in this look.
        const rights = new Map<string, boolean>();
        // One PR at a time (a forge's rate limit is per token), its three reads at once.
        for (const pr of input.prs) {
          const [pullRequest, ci, comments] = await Promise.all([
            adapter.pullRequest(pr.number),
            adapter.ciState(pr.headSha, pr.etag),
            adapter.reviewComments(pr.number, rights),
          ]);
          looks.push({ number: pr.number, ci, comments, pullRequest });
        }
        return looks;
      }),

    landFix: (raw) =>
      asDeliveryActivity('landFix', () => landFixIn(parseInput('landFix', LandFixInputSchema, raw), env())),

    replyToReview: (raw) =>
      asDeliveryActivity('replyToReview', async () => {
        const input = parseInput('replyToReview', ReplyInputSchema, raw);
        const adapter = forge(input.target);
        // A retry after a lost answer finds its reply in the thread and posts no second one.
        const thread = (await adapter.reviewComments(input.number)).filter(
          (c) => c.threadId === input.comment.threadId,
        );
        if (thread.some((c) => c.body.trim() === input.body.trim())) return;
        await adapter.reply(input.number, input.comment, input.body);
      }),

    updatePullRequestBody: (raw) =>
      asDeliveryActivity('updatePullRequestBody', async () => {
        const input = parseInput('updatePullRequestBody', UpdateBodyInputSchema, raw);
        const adapter = forge(input.target);
        const pull = await adapter.pullRequest(input.number);
        const body = mergePrBody(pull.body, input.body);
        return body === pull.body ? pull : adapter.updatePullRequest(input.number, { body });
      }),

    markReady: (raw) =>
      asDeliveryActivity('markReady', async () => {
        const input = parseInput('markReady', MarkReadyInputSchema, raw);
        const adapter = forge(input.target);
        const ready: PullRequest[] = [];
        for (const number of input.numbers) ready.push(await adapter.markReady(number));
        return ready;
      }),

    mergePullRequests: (raw) =>
      asDeliveryActivity('mergePullRequests', () => {
        const input = parseInput('mergePullRequests', MergeInputSchema, raw);
        return mergeStack(forge(input.target), input);
      }),
  };
}
