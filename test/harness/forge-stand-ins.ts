/**
 * Stand-in forge activities for the delivery-decision tests: plain async functions under the real names of
 * src/activities/forge/delivery-activities.ts, taking the real inputs and returning the real shapes. They
 * keep a small forge: each PR's head (moved by landFix, or by "someone" when the script says), and answer
 * each look with the CI and review comments the scenario scripts. Every call is recorded with its input and
 * the workflow time it was scheduled at, so a test asserts what the watch decided and when.
 */
import { Context } from '@temporalio/activity';
import type {
  ForgeActivities,
  LandFixInput,
  PullRequestLook,
} from '../../src/activities/forge/delivery-activities';
import type { PullRequestStatus } from '../../src/domain/contract/state';
import type { CiState, ForgeCheck, PullRequest, ReviewComment } from '../../src/domain/delivery/forge-shapes';

type Name = keyof ForgeActivities;
export type ForgeInput<K extends Name> = Parameters<ForgeActivities[K]>[0];

export interface ForgeCall {
  name: Name;
  input: Record<string, unknown>;
  /** Workflow time (ms) the call was scheduled at. */
  atMs: number;
}

export interface ForgeScript {
  /** The CI a look reads for PR `pr` at the watched head `sha`; `n`: looks so far (default: pending, no checks). */
  ci?: (pr: number, sha: string, n: number) => CiState | 'not-modified';
  /** The review comments on PR `pr` at look `n` (default: none). */
  comments?: (pr: number, n: number) => ReviewComment[];
  /** Someone else pushed to PR `pr` before look `n`: its new head (undefined: no push). */
  pushedBySomeone?: (pr: number, n: number) => string | undefined;
  /** Called when landFix is (before it answers), e.g. to signal the watch. */
  onLandFix?: (input: LandFixInput) => Promise<void> | void;
}

export const check = (
  name: string,
  state: ForgeCheck['state'],
  extra: Partial<ForgeCheck> = {},
): ForgeCheck => ({
  name,
  state,
  description: `${name} ${state}`,
  targetUrl: null,
  logExcerpt: null,
  ...extra,
});

/** A CI answer for `sha` whose overall state follows its checks. */
export function ciOf(sha: string, checks: ForgeCheck[]): CiState {
  const state = checks.some((c) => c.state === 'failure')
    ? 'failure'
    : checks.length === 0 || checks.some((c) => c.state === 'pending')
      ? 'pending'
      : 'success';
  return { sha, state, checks, etag: null };
}

export const comment = (id: number, author: string, extra: Partial<ReviewComment> = {}): ReviewComment => ({
  id,
  threadId: String(id),
  author,
  authorCanWrite: true,
  isBot: false,
  path: 'src/greet.ts',
  line: 3,
  body: `Please rename greet (comment ${id})`,
  commitSha: 'm1-head',
  resolved: false,
  ...extra,
});

/** The stand-in forge over the saga's PRs (as the watch starts with them) and the calls it recorded. */
export function forgeStandIns(prs: readonly PullRequestStatus[], script: ForgeScript) {
  const calls: ForgeCall[] = [];
  const heads = new Map(prs.map((p) => [p.number, p.headSha]));
  let looks = 0;
  let fixes = 0;
  const record = (name: Name, input: unknown) =>
    calls.push({
      name,
      input: input as Record<string, unknown>,
      atMs: Context.current().info.currentAttemptScheduledTimestampMs,
    });
  const pullRequest = (number: number): PullRequest => {
    const pr = prs.find((p) => p.number === number)!;
    return {
      number,
      htmlUrl: pr.url,
      head: pr.head,
      base: pr.base,
      title: `PR ${number}`,
      body: '',
      draft: true,
      state: 'open',
      headSha: heads.get(number)!,
    };
  };

  const activities: ForgeActivities = {
    async lookAtPullRequests(input) {
      record('lookAtPullRequests', input);
      const n = looks++;
      return input.prs.map((watched): PullRequestLook => {
        const pushed = script.pushedBySomeone?.(watched.number, n);
        if (pushed) heads.set(watched.number, pushed);
        return {
          number: watched.number,
          // As an adapter does: the CI of the head the watch asked about.
          ci: script.ci?.(watched.number, watched.headSha, n) ?? ciOf(watched.headSha, []),
          comments: script.comments?.(watched.number, n) ?? [],
          pullRequest: pullRequest(watched.number),
        };
      });
    },
    async landFix(input) {
      record('landFix', input);
      await script.onLandFix?.(input);
      const k = ++fixes;
      const moved: Record<string, string> = {};
      input.stack.slice(input.at).forEach(({ head, number }) => {
        const sha = `fix${k}-pr${number}`;
        heads.set(number, sha);
        moved[head] = sha;
      });
      return { heads: moved, commit: moved[input.stack[input.at]!.head]! };
    },
    async replyToReview(input) {
      record('replyToReview', input);
    },
    async updatePullRequestBody(input) {
      record('updatePullRequestBody', input);
      return { ...pullRequest(input.number), body: input.body };
    },
    async deliverMilestone(input) {
      record('deliverMilestone', input);
      throw new Error('the watch never opens a PR');
    },
    async markReady(input) {
      record('markReady', input);
      return input.numbers.map((n) => ({ ...pullRequest(n), draft: false }));
    },
    async mergePullRequests(input) {
      record('mergePullRequests', input);
      throw new Error('the watch never merges');
    },
  };
  return { activities, calls };
}

/** The inputs of the recorded calls of one forge activity, in order. */
export const forgeInputsOf = <K extends Name>(calls: ForgeCall[], name: K): ForgeInput<K>[] =>
  calls.filter((c) => c.name === name).map((c) => c.input as ForgeInput<K>);
