/**
 * The GitHub adapter of the forge port (port.ts), over GitHub's REST API and, where REST cannot, its GraphQL
 * API (marking a draft ready; review threads' `isResolved`, in github-review.ts). GitHub Enterprise Server
 * through the target's `url` (`https://HOST/api/v3`). Checked against a stand-in that validates every
 * request and answer against GitHub's published OpenAPI description and GraphQL schema
 * (test/standins/github/), and live when a repository and token are given.
 */
import { z } from 'zod';
import { CheckRunsSchema, CombinedStatusSchema, ciStateOf, joinEtags, splitEtags } from './github-ci';
import { type GitHubHttp, type RestAnswer, gitHubHttp } from './github-http';
import { RestCommentRootSchema, authorCanWrite, reviewCommentsOf } from './github-review';
import type { CiState, Forge, ForgeTarget, MergeMethod, PullRequest, ReviewComment } from './port';

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
  throw new Error(
    `GitHub ${call}: ${answer.kind === 'refused' ? `${answer.status} ${answer.message}` : 'no data'}`,
  );
}

/** The GitHub forge; `env` is read for the token at each call (the worker's environment). */
export function githubForge(target: ForgeTarget, env: NodeJS.ProcessEnv = process.env): Forge {
  const http: GitHubHttp = gitHubHttp(target, env);
  const repoPath = `/repos/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.repo)}`;
  const r = { owner: target.owner, repo: target.repo };

  const getPull = async (number: number): Promise<RawPull> =>
    okData(
      await http.rest({
        call: 'read pull request',
        method: 'GET',
        path: `${repoPath}/pulls/${number}`,
        schema: PullSchema,
      }),
      'read pull request',
    );

  async function findPullRequest(head: string): Promise<PullRequest | null> {
    const answer = await http.rest({
      call: 'find pull request',
      method: 'GET',
      path: `${repoPath}/pulls`,
      query: { head: `${target.owner}:${head}`, state: 'all', per_page: '100' },
      schema: z.array(PullSchema),
    });
    const pulls = okData(answer, 'find pull request').filter((p) => p.head.ref === head);
    const chosen = pulls.find((p) => p.state === 'open') ?? pulls.find((p) => p.merged_at !== null);
    return chosen ? toPullRequest(chosen) : null;
  }

  async function ciRead<T>(call: string, path: string, schema: z.ZodType<T>, etag: string | null) {
    return http.rest({ call, method: 'GET', path, query: { per_page: '100' }, schema, etag });
  }

  return {
    target,
    findPullRequest,

    async createPullRequest(input) {
      const answer = await http.rest({
        call: 'create pull request',
        method: 'POST',
        path: `${repoPath}/pulls`,
        body: {
          title: input.title,
          head: input.head,
          base: input.base,
          body: input.body,
          draft: input.draft,
        },
        schema: PullSchema,
        tolerate: [422],
      });
      if (answer.kind === 'ok') return toPullRequest(answer.data);
      // Opened meanwhile (a retry, a second worker): the one that exists is the one.
      const existing = await findPullRequest(input.head);
      if (existing) return existing;
      throw new Error(
        `GitHub create pull request (POST ${repoPath}/pulls) failed: ${answer.kind === 'refused' ? `${answer.status} ${answer.message}` : ''}`,
      );
    },

    async updatePullRequest(number, change) {
      const answer = await http.rest({
        call: 'update pull request',
        method: 'PATCH',
        path: `${repoPath}/pulls/${number}`,
        body: change,
        schema: PullSchema,
      });
      return toPullRequest(okData(answer, 'update pull request'));
    },

    async markReady(number) {
      const pull = await getPull(number);
      if (!pull.draft) return toPullRequest(pull);
      // REST cannot take a pull request out of draft; GraphQL's mutation can.
      await http.graphql('mark pull request ready', READY_MUTATION, { id: pull.node_id }, ReadySchema);
      return toPullRequest(await getPull(number));
    },

    async ciState(sha, etag): Promise<CiState | 'not-modified'> {
      const ref = encodeURIComponent(sha);
      const [statusTag, checksTag] = splitEtags(etag);
      const statusPath = `${repoPath}/commits/${ref}/status`;
      const checksPath = `${repoPath}/commits/${ref}/check-runs`;
      let status = await ciRead('read commit status', statusPath, CombinedStatusSchema, statusTag);
      let checks = await ciRead('read check runs', checksPath, CheckRunsSchema, checksTag);
      if (status.kind === 'not-modified' && checks.kind === 'not-modified') return 'not-modified';
      // One changed: the other's body is needed again (a 304 carries none).
      if (status.kind === 'not-modified')
        status = await ciRead('read commit status', statusPath, CombinedStatusSchema, null);
      if (checks.kind === 'not-modified')
        checks = await ciRead('read check runs', checksPath, CheckRunsSchema, null);
      const combined = okData(status, 'read commit status');
      const runs = okData(checks, 'read check runs');
      const tags = joinEtags(
        status.kind === 'ok' ? status.etag : null,
        checks.kind === 'ok' ? checks.etag : null,
      );
      return ciStateOf(sha, combined, runs, tags);
    },

    reviewComments: (number) => reviewCommentsOf(http, r, number),

    async reply(number: number, comment: ReviewComment, body: string) {
      // GitHub replies to a thread's first comment only ("replies to replies are not supported").
      const read = await http.rest({
        call: 'read review comment',
        method: 'GET',
        path: `${repoPath}/pulls/comments/${comment.id}`,
        schema: RestCommentRootSchema,
      });
      const root = okData(read, 'read review comment');
      await http.rest({
        call: 'reply to review comment',
        method: 'POST',
        path: `${repoPath}/pulls/${number}/comments/${root.in_reply_to_id ?? root.id}/replies`,
        body: { body },
        schema: z.object({ id: z.number() }),
      });
    },

    async merge(number: number, method: MergeMethod, expectedHeadSha: string) {
      const answer = await http.rest({
        call: 'merge pull request',
        method: 'PUT',
        path: `${repoPath}/pulls/${number}/merge`,
        body: { merge_method: method, sha: expectedHeadSha },
        schema: MergeResultSchema,
        // Not mergeable (branch protection, a draft), head moved, or refused: GitHub's reason, not a throw.
        tolerate: [405, 409, 422],
      });
      if (answer.kind === 'ok') return { merged: answer.data.merged, message: answer.data.message };
      return { merged: false, message: answer.kind === 'refused' ? answer.message : 'not merged' };
    },

    async whoAmI() {
      const me = okData(
        await http.rest({
          call: 'read authenticated user',
          method: 'GET',
          path: '/user',
          schema: UserSchema,
        }),
        'read authenticated user',
      );
      return { login: me.login, canPush: await authorCanWrite(http, r, me.login) };
    },
  };
}
