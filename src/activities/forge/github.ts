/**
 * The GitHub adapter of the forge port (port.ts), over GitHub's REST API and, where REST cannot, its GraphQL
 * API (marking a draft ready; review threads' `isResolved`, in github-review.ts). GitHub Enterprise Server
 * through the target's `url` (`https://HOST/api/v3`). Checked against a stand-in that validates every
 * request and answer against GitHub's published OpenAPI description and GraphQL schema
 * (test/standins/github/), and live when a repository and token are given.
 */
import { z } from 'zod';
import { ForgeCallError } from './forge-error';
import { CheckRunsSchema, CombinedStatusSchema, ciStateOf, joinEtags, splitEtags } from './github-ci';
import { type GitHubHttp, type RestAnswer, gitHubHttp } from './github-http';
import { type Repo, RestCommentRootSchema, authorCanWrite, reviewCommentsOf } from './github-review';
import type {
  CiState,
  Forge,
  ForgeTarget,
  MergeMethod,
  PullRequest,
  ReviewComment,
  NewPullRequest,
} from './port';

const PullSchema = z.object({
  number: z.number(),
  node_id: z.string(),
  html_url: z.string(),
  state: z.enum(['open', 'closed']),
  title: z.string(),
  body: z.string().nullable(),
  draft: z.boolean().optional(),
  merged_at: z.string().nullable(),
  head: z.object({ ref: z.string(), sha: z.string() }),
  base: z.object({ ref: z.string() }),
});
type RawPull = z.infer<typeof PullSchema>;

const MergeResultSchema = z.object({ merged: z.boolean(), message: z.string() });
const UserSchema = z.object({ login: z.string() });

const READY_MUTATION = `mutation($id: ID!) {
  markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { number isDraft } }
}`;
const ReadySchema = z.object({
  markPullRequestReadyForReview: z
    .object({ pullRequest: z.object({ number: z.number(), isDraft: z.boolean() }).nullable() })
    .nullable(),
});

const toPullRequest = (p: RawPull): PullRequest => ({
  number: p.number,
  htmlUrl: p.html_url,
  head: p.head.ref,
  base: p.base.ref,
  title: p.title,
  body: p.body ?? '',
  draft: p.draft ?? false,
  state: p.merged_at ? 'merged' : p.state,
  headSha: p.head.sha,
});

function okData<T>(answer: RestAnswer<T>, call: string): T {
  if (answer.kind === 'ok') return answer.data;
  const status = answer.kind === 'refused' ? answer.status : null;
  throw new ForgeCallError(
    call,
    status,
    `GitHub ${call}: ${answer.kind === 'refused' ? `${answer.status} ${answer.message}` : 'no data'}`,
  );
}

/** The GitHub forge; `env` is read for the token at each call (the worker's environment). */
export function githubForge(target: ForgeTarget, env: NodeJS.ProcessEnv = process.env): Forge {
  return new GitHubForge(target, gitHubHttp(target, env));
}

class GitHubForge implements Forge {
  private readonly repoPath: string;
  private readonly repo: Repo;

  constructor(
    readonly target: ForgeTarget,
    private readonly http: GitHubHttp,
  ) {
    this.repoPath = `/repos/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.repo)}`;
    this.repo = { owner: target.owner, repo: target.repo };
  }

  private async getPull(number: number): Promise<RawPull> {
    const answer = await this.http.rest({
      call: 'read pull request',
      method: 'GET',
      path: `${this.repoPath}/pulls/${number}`,
      schema: PullSchema,
    });
    return okData(answer, 'read pull request');
  }

  async pullRequest(number: number): Promise<PullRequest> {
    return toPullRequest(await this.getPull(number));
  }

  async findPullRequest(head: string): Promise<PullRequest | null> {
    const answer = await this.http.rest({
      call: 'find pull request',
      method: 'GET',
      path: `${this.repoPath}/pulls`,
      query: { head: `${this.target.owner}:${head}`, state: 'all', per_page: '100' },
      schema: z.array(PullSchema),
    });
    const pulls = okData(answer, 'find pull request').filter((p) => p.head.ref === head);
    const chosen = pulls.find((p) => p.state === 'open') ?? pulls.find((p) => p.merged_at !== null);
    return chosen ? toPullRequest(chosen) : null;
  }

  async createPullRequest(input: NewPullRequest): Promise<PullRequest> {
    const answer = await this.http.rest({
      call: 'create pull request',
      method: 'POST',
      path: `${this.repoPath}/pulls`,
      body: { title: input.title, head: input.head, base: input.base, body: input.body, draft: input.draft },
      schema: PullSchema,
      tolerate: [422],
    });
    if (answer.kind === 'ok') return toPullRequest(answer.data);
    // Opened meanwhile (a retry, a second worker): the one that exists is the one.
    const existing = await this.findPullRequest(input.head);
    if (existing) return existing;
    const reason = answer.kind === 'refused' ? `${answer.status} ${answer.message}` : 'no answer';
    throw new ForgeCallError(
      'create pull request',
      answer.kind === 'refused' ? answer.status : null,
      `GitHub create pull request (POST ${this.repoPath}/pulls) failed: ${reason}`,
    );
  }

  async updatePullRequest(
    number: number,
    change: { title?: string; body?: string; base?: string },
  ): Promise<PullRequest> {
    const answer = await this.http.rest({
      call: 'update pull request',
      method: 'PATCH',
      path: `${this.repoPath}/pulls/${number}`,
      body: change,
      schema: PullSchema,
    });
    return toPullRequest(okData(answer, 'update pull request'));
  }

  async markReady(number: number): Promise<PullRequest> {
    const pull = await this.getPull(number);
    if (!pull.draft) return toPullRequest(pull);
    // REST cannot take a pull request out of draft; GraphQL's mutation can.
    await this.http.graphql('mark pull request ready', READY_MUTATION, { id: pull.node_id }, ReadySchema);
    return toPullRequest(await this.getPull(number));
  }

  private ciRead<T>(call: string, path: string, schema: z.ZodType<T>, etag: string | null) {
    return this.http.rest({ call, method: 'GET', path, query: { per_page: '100' }, schema, etag });
  }

  async ciState(sha: string, etag?: string | null): Promise<CiState | 'not-modified'> {
    const ref = encodeURIComponent(sha);
    const [statusTag, checksTag] = splitEtags(etag);
    const statusPath = `${this.repoPath}/commits/${ref}/status`;
    const checksPath = `${this.repoPath}/commits/${ref}/check-runs`;
    let status = await this.ciRead('read commit status', statusPath, CombinedStatusSchema, statusTag);
    let checks = await this.ciRead('read check runs', checksPath, CheckRunsSchema, checksTag);
    if (status.kind === 'not-modified' && checks.kind === 'not-modified') return 'not-modified';
    // One changed: the other's body is needed again (a 304 carries none).
    if (status.kind === 'not-modified') {
      status = await this.ciRead('read commit status', statusPath, CombinedStatusSchema, null);
    }
    if (checks.kind === 'not-modified') {
      checks = await this.ciRead('read check runs', checksPath, CheckRunsSchema, null);
    }
    const combined = okData(status, 'read commit status');
    const runs = okData(checks, 'read check runs');
    const tags = joinEtags(
      status.kind === 'ok' ? status.etag : null,
      checks.kind === 'ok' ? checks.etag : null,
    );
    return ciStateOf(sha, combined, runs, tags);
  }

  reviewComments(number: number, rights?: Map<string, boolean>): Promise<ReviewComment[]> {
    return reviewCommentsOf(this.http, this.repo, number, rights);
  }

  async reply(number: number, comment: ReviewComment, body: string): Promise<void> {
    // GitHub replies to a thread's first comment only ("replies to replies are not supported").
    const read = await this.http.rest({
      call: 'read review comment',
      method: 'GET',
      path: `${this.repoPath}/pulls/comments/${comment.id}`,
      schema: RestCommentRootSchema,
    });
    const root = okData(read, 'read review comment');
    await this.http.rest({
      call: 'reply to review comment',
      method: 'POST',
      path: `${this.repoPath}/pulls/${number}/comments/${root.in_reply_to_id ?? root.id}/replies`,
      body: { body },
      schema: z.object({ id: z.number() }),
    });
  }

  async merge(
    number: number,
    method: MergeMethod,
    expectedHeadSha: string,
  ): Promise<{ merged: boolean; message: string }> {
    const answer = await this.http.rest({
      call: 'merge pull request',
      method: 'PUT',
      path: `${this.repoPath}/pulls/${number}/merge`,
      body: { merge_method: method, sha: expectedHeadSha },
      schema: MergeResultSchema,
      // Not mergeable (branch protection, a draft), head moved, or refused: GitHub's reason, not a throw.
      tolerate: [405, 409, 422],
    });
    if (answer.kind === 'ok') return { merged: answer.data.merged, message: answer.data.message };
    return { merged: false, message: answer.kind === 'refused' ? answer.message : 'not merged' };
  }

  async whoAmI(): Promise<{ login: string; canPush: boolean }> {
    const answer = await this.http.rest({
      call: 'read authenticated user',
      method: 'GET',
      path: '/user',
      schema: UserSchema,
    });
    const me = okData(answer, 'read authenticated user');
    return { login: me.login, canPush: await authorCanWrite(this.http, this.repo, me.login) };
  }
}
