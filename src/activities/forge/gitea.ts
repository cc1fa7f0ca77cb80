/**
 * The forge port over Gitea's (and Forgejo's) `/api/v1`, checked against Gitea 1.27.3. HTTP only (pushing is
 * push.ts). Gitea specifics: a draft is a `WIP: ` title prefix (its API has no draft field to set); a pull is
 * found by listing (no head filter without the base); review threads are Gitea's conversations (same file and
 * line), replied to through `pulls/{n}/comments/{id}/replies`; an author's rights come from
 * `collaborators/{user}/permission`, which only a repository admin may ask about another user.
 */
import { z } from 'zod';
import { ForgeCallError } from './forge-error';
import { DEFAULT_FORGE_TIMEOUT_MS, GiteaClient } from './gitea-client';
import {
  giteaTitle,
  pickPullForHead,
  toCheck,
  toPullRequest,
  toReviewComments,
  WRITE_PERMISSIONS,
} from './gitea-map';
import {
  GiteaCombinedStatusSchema,
  GiteaPermissionSchema,
  GiteaPullListSchema,
  GiteaPullSchema,
  GiteaRepoSchema,
  GiteaReviewCommentListSchema,
  GiteaReviewCommentSchema,
  GiteaReviewListSchema,
  GiteaUserSchema,
  type GiteaCommitStatus,
  type GiteaReviewComment,
} from './gitea-schemas';
import { combinedState } from '../../domain/delivery/forge-shapes';
import type {
  CiState,
  Forge,
  ForgeTarget,
  MergeMethod,
  PullRequest,
  ReviewComment,
  NewPullRequest,
} from './port';

export interface GiteaForgeOptions {
  /** Per HTTP call; 30 s when absent. */
  timeoutMs?: number;
  /** How long a merge waits out Gitea's background mergeability check; 20 s when absent. */
  mergeWaitMs?: number;
}

const DEFAULT_MERGE_WAIT_MS = 20_000;

const enc = encodeURIComponent;
/** Merge refusals Gitea answers with a reason (not allowed, WIP, conflict, head out of date, ...). */
const MERGE_REFUSALS = [405, 409, 422];

/** `env` is where the token is read from (at each call), normally the worker's process.env. */
export function giteaForge(
  target: ForgeTarget,
  env: NodeJS.ProcessEnv = process.env,
  options: GiteaForgeOptions = {},
): Forge {
  if (target.kind !== 'gitea') throw new Error(`giteaForge was given a '${target.kind}' forge target`);
  const client = new GiteaClient(target, env, options.timeoutMs ?? DEFAULT_FORGE_TIMEOUT_MS);
  return new GiteaForge(target, client, options.mergeWaitMs ?? DEFAULT_MERGE_WAIT_MS);
}

class GiteaForge implements Forge {
  private readonly repo: string;

  constructor(
    readonly target: ForgeTarget,
    private readonly client: GiteaClient,
    private readonly mergeWaitMs: number,
  ) {
    this.repo = client.repoPath();
  }

  private getPull(number: number) {
    return this.client.call({
      call: 'get pull request',
      method: 'GET',
      path: `${this.repo}/pulls/${number}`,
      schema: GiteaPullSchema,
    });
  }

  private async editPull(number: number, body: Record<string, string>, call: string) {
    const path = `${this.repo}/pulls/${number}`;
    return toPullRequest(
      await this.client.call({ call, method: 'PATCH', path, body, schema: GiteaPullSchema }),
    );
  }

  async pullRequest(number: number): Promise<PullRequest> {
    return toPullRequest(await this.getPull(number));
  }

  async findPullRequest(head: string): Promise<PullRequest | null> {
    // Open ones first (few, and the usual answer), then closed ones for a pull merged already.
    for (const state of ['open', 'closed'] as const) {
      const pulls = await this.client.list({
        call: `list ${state} pull requests`,
        path: `${this.repo}/pulls?state=${state}&sort=recentupdate`,
        schema: GiteaPullListSchema,
      });
      const found = pickPullForHead(pulls, head);
      if (found) return toPullRequest(found);
    }
    return null;
  }

  async createPullRequest(input: NewPullRequest): Promise<PullRequest> {
    const created = await this.client.call({
      call: 'create pull request',
      method: 'POST',
      path: `${this.repo}/pulls`,
      body: {
        head: input.head,
        base: input.base,
        title: giteaTitle(input.title, input.draft),
        body: input.body,
      },
      schema: GiteaPullSchema,
    });
    return toPullRequest(created);
  }

  async updatePullRequest(
    number: number,
    change: { title?: string; body?: string; base?: string },
  ): Promise<PullRequest> {
    const body: Record<string, string> = {};
    if (change.body !== undefined) body.body = change.body;
    if (change.base !== undefined) body.base = change.base;
    // A draft keeps its prefix: the new title is written the way the pull's draft state needs.
    if (change.title !== undefined) {
      body.title = giteaTitle(change.title, toPullRequest(await this.getPull(number)).draft);
    }
    return this.editPull(number, body, 'update pull request');
  }

  async markReady(number: number): Promise<PullRequest> {
    const current = toPullRequest(await this.getPull(number));
    if (!current.draft) return current;
    const title = giteaTitle(current.title, false);
    const ready = await this.editPull(number, { title }, 'mark pull request ready');
    if (ready.draft) {
      throw new ForgeCallError(
        'mark pull request ready',
        null,
        `pull request #${number} is still a draft: the server's work-in-progress prefixes differ from Gitea's defaults`,
      );
    }
    return ready;
  }

  async ciState(sha: string, etag?: string | null): Promise<CiState | 'not-modified'> {
    const statuses: GiteaCommitStatus[] = [];
    let answerEtag: string | null = null;
    for (let page = 1; page <= 20; page++) {
      const answer = await this.client.request({
        call: 'get combined commit status',
        method: 'GET',
        path: `${this.repo}/commits/${enc(sha)}/status?limit=50&page=${page}`,
        schema: GiteaCombinedStatusSchema,
        etag: page === 1 ? etag : null,
      });
      if (answer.kind === 'not-modified') return 'not-modified';
      if (answer.kind !== 'ok') break;
      if (page === 1) answerEtag = answer.etag;
      const pageStatuses = answer.data.statuses ?? [];
      statuses.push(...pageStatuses);
      if (pageStatuses.length < 50 || statuses.length >= (answer.data.total_count ?? 0)) break;
    }
    const checks = statuses.map(toCheck);
    return { sha, state: combinedState(checks), checks, etag: answerEtag };
  }

  /**
   * Whether `login` may push. An unknown user (404) may not; a refusal to say (403: the token's user is not
   * a repository admin) is an error naming the fix, not a silent "no".
   */
  private async canWrite(login: string): Promise<boolean> {
    const answer = await this.client.request({
      call: 'get collaborator permission',
      method: 'GET',
      path: `${this.repo}/collaborators/${enc(login)}/permission`,
      schema: GiteaPermissionSchema,
      acceptStatuses: [403, 404],
    });
    if (answer.kind === 'refused' && answer.status === 403) {
      throw new ForgeCallError(
        'get collaborator permission',
        403,
        `Gitea call 'get collaborator permission' failed: HTTP 403: ${answer.message} (the token's user must be an admin of ${this.target.owner}/${this.target.repo} to read reviewers' rights)`,
      );
    }
    return answer.kind === 'ok' && WRITE_PERMISSIONS.has(answer.data.permission);
  }

  async reviewComments(number: number, rights: Map<string, boolean> = new Map()): Promise<ReviewComment[]> {
    const reviews = await this.client.list({
      call: 'list pull request reviews',
      path: `${this.repo}/pulls/${number}/reviews`,
      schema: GiteaReviewListSchema,
    });
    const comments: GiteaReviewComment[] = [];
    // A pending review is its author's unsent draft.
    for (const review of reviews.filter((r) => r.state !== 'PENDING')) {
      const listed = await this.client.call({
        call: 'list review comments',
        method: 'GET',
        path: `${this.repo}/pulls/${number}/reviews/${review.id}/comments`,
        schema: GiteaReviewCommentListSchema,
      });
      comments.push(...listed);
    }
    const logins = new Set(comments.map((comment) => comment.user?.login ?? '').filter((l) => l !== ''));
    for (const login of logins) {
      if (!rights.has(login)) rights.set(login, await this.canWrite(login));
    }
    return toReviewComments(comments, (login) => rights.get(login) === true);
  }

  async reply(number: number, comment: ReviewComment, body: string): Promise<void> {
    // Gitea threads a reply to any comment of the conversation; the thread's first comment is the anchor.
    const anchor = Number(comment.threadId) || comment.id;
    await this.client.call({
      call: 'reply to review comment',
      method: 'POST',
      path: `${this.repo}/pulls/${number}/comments/${anchor}/replies`,
      body: { body },
      schema: GiteaReviewCommentSchema,
    });
  }

  /**
   * Gitea checks a pull's mergeability in the background after a push or an edit and answers "Please try
   * again later" meanwhile: that answer is waited out (a few seconds), any other refusal is the answer.
   */
  async merge(
    number: number,
    method: MergeMethod,
    expectedHeadSha: string,
  ): Promise<{ merged: boolean; message: string }> {
    const started = Date.now();
    for (;;) {
      const answer = await this.client.request({
        call: 'merge pull request',
        method: 'POST',
        path: `${this.repo}/pulls/${number}/merge`,
        // The branch stays: in a stack, the next pull's base is this pull's head.
        body: { do: method, head_commit_id: expectedHeadSha, delete_branch_after_merge: false },
        schema: z.unknown(),
        acceptStatuses: MERGE_REFUSALS,
      });
      if (answer.kind !== 'refused') {
        return { merged: true, message: `merged pull request #${number} (${method})` };
      }
      const checking = answer.status === 405 && /try again later/i.test(answer.message);
      if (!checking || Date.now() - started > this.mergeWaitMs) {
        return { merged: false, message: `HTTP ${answer.status}: ${answer.message}` };
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async whoAmI(): Promise<{ login: string; canPush: boolean }> {
    const user = await this.client.call({
      call: 'get authenticated user',
      method: 'GET',
      path: '/user',
      schema: GiteaUserSchema,
    });
    const repository = await this.client.call({
      call: 'get repository',
      method: 'GET',
      path: this.repo,
      schema: GiteaRepoSchema,
    });
    const rights = repository.permissions;
    return { login: user.login, canPush: rights?.push === true || rights?.admin === true };
  }
}
