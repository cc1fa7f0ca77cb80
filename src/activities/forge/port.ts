/**
 * The forge port: what delivering a saga as pull requests needs from GitHub or Gitea/Forgejo, one small
 * interface with an adapter per forge. Adapters do HTTP only; pushing goes through the worker's git with a
 * credential helper that reads the token from the environment. The token is read from the environment variable the config names at the moment of a call, sent
 * in an Authorization header only, and never appears in an error, a log, a URL or a return value.
 */
import { z } from 'zod';

/** Which forge and which repository: `forge:` in the user's saga.config.yaml. */
export const ForgeTargetSchema = z.object({
  kind: z.enum(['github', 'gitea']),
  /** The API's base: `https://api.github.com`, a GitHub Enterprise `https://HOST/api/v3`, a Gitea `https://HOST`. */
  url: z.string().url(),
  owner: z.string().min(1),
  repo: z.string().min(1),
  /** The environment variable holding the token (read by the worker, never stored). */
  tokenEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
});
export type ForgeTarget = z.infer<typeof ForgeTargetSchema>;

export interface PullRequest {
  number: number;
  /** The PR's page for people. */
  htmlUrl: string;
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  state: 'open' | 'closed' | 'merged';
  headSha: string;
}

/** One check or commit status on a commit. `neutral` and `skipped` never count as failures. */
export interface ForgeCheck {
  name: string;
  state: 'pending' | 'success' | 'failure' | 'neutral' | 'skipped';
  description: string;
  /** Where its log is (a CI page), when the forge says. */
  targetUrl: string | null;
  /** The tail of its log, when the forge serves logs (GitHub Actions check runs); null otherwise. */
  logExcerpt: string | null;
}

/** The head commit's CI: failure if any check failed, pending while any runs, success when all passed. */
export interface CiState {
  sha: string;
  state: 'pending' | 'success' | 'failure';
  checks: ForgeCheck[];
  /** For a conditional request next time (ETag), where the forge supports it. */
  etag: string | null;
}

export interface ReviewComment {
  id: number;
  /** The thread it belongs to (GitHub: the review thread's node id; Gitea: the first comment's id). */
  threadId: string;
  author: string;
  /** Whether the author may push to the repository (write, maintain or admin); read from the forge. */
  authorCanWrite: boolean;
  isBot: boolean;
  path: string | null;
  line: number | null;
  body: string;
  commitSha: string;
  resolved: boolean;
}

export type MergeMethod = 'merge' | 'squash' | 'rebase';

export interface Forge {
  readonly target: ForgeTarget;
  /** The open (or merged) PR whose head is `head`, or null: always asked before one is created. */
  findPullRequest(head: string): Promise<PullRequest | null>;
  createPullRequest(input: {
    head: string;
    base: string;
    title: string;
    body: string;
    draft: boolean;
  }): Promise<PullRequest>;
  updatePullRequest(
    number: number,
    change: { title?: string; body?: string; base?: string },
  ): Promise<PullRequest>;
  markReady(number: number): Promise<PullRequest>;
  /** `not-modified` when `etag` still holds (nothing to re-read). */
  ciState(sha: string, etag?: string | null): Promise<CiState | 'not-modified'>;
  /** The PR's review comments, resolved ones included (the caller decides), with their authors' rights. */
  reviewComments(number: number): Promise<ReviewComment[]>;
  /** Replies in the comment's thread. */
  reply(number: number, comment: ReviewComment, body: string): Promise<void>;
  /** Through the forge's merge API, so branch protection holds; `merged: false` with the forge's reason. */
  merge(
    number: number,
    method: MergeMethod,
    expectedHeadSha: string,
  ): Promise<{ merged: boolean; message: string }>;
  /** The authenticated user's login and whether it may push and open PRs (for `saga doctor`). */
  whoAmI(): Promise<{ login: string; canPush: boolean }>;
}
