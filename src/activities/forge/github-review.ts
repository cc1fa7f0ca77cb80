/**
 * A GitHub pull request's review comments for the forge port: the REST list (every page), each comment's
 * review thread and whether it is resolved (GraphQL `reviewThreads`: REST does not say), and each author's
 * rights (`collaborators/{user}/permission`); bots by `user.type === 'Bot'`.
 */
import { z } from 'zod';
import type { GitHubHttp } from './github-http';
import type { ReviewComment } from './port';

const PAGE = 100;
const MAX_PAGES = 20;

const RestCommentSchema = z.object({
  id: z.number(),
  in_reply_to_id: z.number().optional(),
  path: z.string(),
  line: z.number().nullable().optional(),
  original_line: z.number().nullable().optional(),
  commit_id: z.string(),
  body: z.string(),
  user: z.object({ login: z.string(), type: z.string() }).nullable(),
});
export const RestCommentsSchema = z.array(RestCommentSchema);
export const RestCommentRootSchema = RestCommentSchema.pick({ id: true, in_reply_to_id: true });

const PermissionSchema = z.object({ permission: z.string(), role_name: z.string().optional() });

const THREADS_QUERY = `query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 100) { nodes { fullDatabaseId } } }
      }
    }
  }
}`;

const ThreadsSchema = z.object({
  repository: z
    .object({
      pullRequest: z
        .object({
          reviewThreads: z.object({
            pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
            nodes: z.array(
              z.object({
                id: z.string(),
                isResolved: z.boolean(),
                comments: z.object({
                  nodes: z.array(z.object({ fullDatabaseId: z.union([z.string(), z.number()]).nullable() })),
                }),
              }),
            ),
          }),
        })
        .nullable(),
    })
    .nullable(),
});

export interface Repo {
  owner: string;
  repo: string;
}

const repoPath = (r: Repo): string => `/repos/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repo)}`;

/** Whether a legacy permission or role may push: admin, maintain or write. */
export const canWrite = (p: { permission: string; role_name?: string }): boolean =>
  ['admin', 'write'].includes(p.permission) || ['admin', 'maintain', 'write'].includes(p.role_name ?? '');

/** The author's rights on the repository; a user GitHub does not know there (404) has none. */
export async function authorCanWrite(http: GitHubHttp, r: Repo, login: string): Promise<boolean> {
  const answer = await http.rest({
    call: 'read collaborator permission',
    method: 'GET',
    path: `${repoPath(r)}/collaborators/${encodeURIComponent(login)}/permission`,
    schema: PermissionSchema,
    tolerate: [404],
  });
  return answer.kind === 'ok' && canWrite(answer.data);
}

async function listComments(http: GitHubHttp, r: Repo, number: number) {
  const all: z.infer<typeof RestCommentsSchema> = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await http.rest({
      call: 'list review comments',
      method: 'GET',
      path: `${repoPath(r)}/pulls/${number}/comments`,
      query: { per_page: String(PAGE), page: String(page) },
      schema: RestCommentsSchema,
    });
    if (answer.kind !== 'ok') break;
    all.push(...answer.data);
    if (answer.data.length < PAGE) break;
  }
  return all;
}

/** Comment id → its thread's node id and whether the thread is resolved. */
async function threadsOf(http: GitHubHttp, r: Repo, number: number) {
  const byComment = new Map<number, { id: string; resolved: boolean }>();
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const data: z.infer<typeof ThreadsSchema> = await http.graphql(
      'read review threads',
      THREADS_QUERY,
      { owner: r.owner, name: r.repo, number, cursor },
      ThreadsSchema,
    );
    const threads = data.repository?.pullRequest?.reviewThreads;
    if (!threads) break;
    for (const t of threads.nodes) {
      for (const c of t.comments.nodes) {
        if (c.fullDatabaseId !== null)
          byComment.set(Number(c.fullDatabaseId), { id: t.id, resolved: t.isResolved });
      }
    }
    if (!threads.pageInfo.hasNextPage) break;
    cursor = threads.pageInfo.endCursor;
  }
  return byComment;
}

/** `rights`: authors' rights already read in this look (see the port's reviewComments), filled in. */
export async function reviewCommentsOf(
  http: GitHubHttp,
  r: Repo,
  number: number,
  rights: Map<string, boolean> = new Map(),
): Promise<ReviewComment[]> {
  const comments = await listComments(http, r, number);
  // No comment, no thread to ask GraphQL about: a watched PR nobody reviewed costs one call less per look.
  if (comments.length === 0) return [];
  const threads = await threadsOf(http, r, number);
  const out: ReviewComment[] = [];
  for (const c of comments) {
    const login = c.user?.login ?? 'ghost';
    if (!rights.has(login)) rights.set(login, c.user ? await authorCanWrite(http, r, login) : false);
    // A thread past the first 100 comments is found through the comment it replies to.
    const thread = threads.get(c.id) ?? (c.in_reply_to_id ? threads.get(c.in_reply_to_id) : undefined);
    out.push({
      id: c.id,
      threadId: thread?.id ?? `comment:${c.in_reply_to_id ?? c.id}`,
      author: login,
      authorCanWrite: rights.get(login) ?? false,
      isBot: c.user?.type === 'Bot',
      path: c.path,
      line: c.line ?? c.original_line ?? null,
      body: c.body,
      commitSha: c.commit_id,
      resolved: thread?.resolved ?? false,
    });
  }
  return out;
}
