/**
 * What a forge tells delivery, as the saga keeps it: the pull request, the head commit's CI and the review
 * comments. The forge adapters (src/activities/forge/) parse their API's answers into these shapes; the
 * workflows and the pure rules beside this file read only these.
 */
import { z } from 'zod';
import { FORGE_KINDS } from '../config/delivery-keys';

/** Which forge and which repository: `forge:` in the user's saga.config.yaml. */
export const ForgeTargetSchema = z.object({
  kind: z.enum(FORGE_KINDS),
  /** The API's base: `https://api.github.com`, a GitHub Enterprise `https://HOST/api/v3`, a Gitea `https://HOST`. */
  url: z.string().url(),
  owner: z.string().min(1),
  repo: z.string().min(1),
  /** The environment variable holding the token (read by the worker at the moment of a call, never stored). */
  tokenEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name (A-Z, 0-9, _)'),
});
export type ForgeTarget = z.infer<typeof ForgeTargetSchema>;

export const PullRequestSchema = z.object({
  number: z.number().int().positive(),
  /** The PR's page for people. */
  htmlUrl: z.string(),
  head: z.string(),
  base: z.string(),
  title: z.string(),
  body: z.string(),
  draft: z.boolean(),
  state: z.enum(['open', 'closed', 'merged']),
  headSha: z.string(),
});
export type PullRequest = z.infer<typeof PullRequestSchema>;

/** One check or commit status on a commit. `neutral` and `skipped` never count as failures. */
export const ForgeCheckSchema = z.object({
  name: z.string(),
  state: z.enum(['pending', 'success', 'failure', 'neutral', 'skipped']),
  description: z.string(),
  /** Where its log is (a CI page), when the forge says. */
  targetUrl: z.string().nullable(),
  /** The tail of its log, when the forge serves one (a check run's output); null otherwise. */
  logExcerpt: z.string().nullable(),
});
export type ForgeCheck = z.infer<typeof ForgeCheckSchema>;

/** The head commit's CI: failure if any check failed, pending while any runs, success when all passed. */
export const CiStateSchema = z.object({
  sha: z.string(),
  state: z.enum(['pending', 'success', 'failure']),
  checks: z.array(ForgeCheckSchema),
  /** For a conditional request next time (ETag), where the forge supports it. */
  etag: z.string().nullable(),
});
export type CiState = z.infer<typeof CiStateSchema>;

export const ReviewCommentSchema = z.object({
  id: z.number().int(),
  /** The thread it belongs to (GitHub: the review thread's node id; Gitea: the first comment's id). */
  threadId: z.string(),
  author: z.string(),
  /** Whether the author may push to the repository (write, maintain or admin), as the forge says. */
  authorCanWrite: z.boolean(),
  isBot: z.boolean(),
  path: z.string().nullable(),
  line: z.number().int().nullable(),
  body: z.string(),
  commitSha: z.string(),
  resolved: z.boolean(),
});
export type ReviewComment = z.infer<typeof ReviewCommentSchema>;

export const MERGE_METHODS = ['merge', 'squash', 'rebase'] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];

/**
 * The overall state of a set of checks: any failure fails; any still running is pending; none at all is
 * pending too (silence right after a push is never read as green: see `ciVerdict`); else success.
 */
export function combinedState(checks: readonly ForgeCheck[]): CiState['state'] {
  if (checks.length === 0) return 'pending';
  if (checks.some((c) => c.state === 'failure')) return 'failure';
  if (checks.some((c) => c.state === 'pending')) return 'pending';
  return 'success';
}

/** A forge webhook's news, as `saga chat serve` passes it on once its signature holds. */
export const ForgeEventSchema = z.object({
  kind: z.enum(['ci', 'review', 'pull-request']),
  /** The branch it is about (a saga delivery branch), when the event names one. */
  head: z.string().nullable(),
  sha: z.string().nullable(),
});
export type ForgeEvent = z.infer<typeof ForgeEventSchema>;
