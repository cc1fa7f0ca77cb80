/**
 * The forge port: what delivering a saga as pull requests needs from GitHub or Gitea/Forgejo, one small
 * interface with an adapter per forge. Adapters do HTTP only; pushing goes through the worker's git with a
 * credential helper that reads the token from the environment. The token is read from the environment variable the config names at the moment of a call, sent
 * in an Authorization header only, and never appears in an error, a log, a URL or a return value.
 */
import type {
  CiState,
  ForgeTarget,
  MergeMethod,
  PullRequest,
  ReviewComment,
} from '../../domain/delivery/forge-shapes';

// The shapes are the domain's (zod schemas, also kept in the saga's state); the port adds the calls.
export { ForgeTargetSchema } from '../../domain/delivery/forge-shapes';
export type {
  CiState,
  ForgeCheck,
  ForgeTarget,
  MergeMethod,
  PullRequest,
  ReviewComment,
} from '../../domain/delivery/forge-shapes';

/** A pull request to open: `draft` where the forge has drafts (Gitea marks it in the title). */
export interface NewPullRequest {
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

export interface Forge {
  readonly target: ForgeTarget;
  /** The PR by its number, as it is now (a 404 when there is none). */
  pullRequest(number: number): Promise<PullRequest>;
  /** The open (or merged) PR whose head is `head`, or null: always asked before one is created. */
  findPullRequest(head: string): Promise<PullRequest | null>;
  createPullRequest(input: NewPullRequest): Promise<PullRequest>;
  updatePullRequest(
    number: number,
    change: { title?: string; body?: string; base?: string },
  ): Promise<PullRequest>;
  markReady(number: number): Promise<PullRequest>;
  /** `not-modified` when `etag` still holds (nothing to re-read). */
  ciState(sha: string, etag?: string | null): Promise<CiState | 'not-modified'>;
  /**
   * The PR's review comments, resolved ones included (the caller decides), with their authors' rights.
   * `rights`: authors' rights already read in this look at several PRs, used and filled in, so each author
   * is asked about once per look (never kept longer: a right taken away counts at the next look).
   */
  reviewComments(number: number, rights?: Map<string, boolean>): Promise<ReviewComment[]>;
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
