/**
 * The GitHub stand-in's REST operations, by the operationId of GitHub's OpenAPI description: what each does
 * to the stand-in's state and what it answers. server.ts checks requests and answers against the description.
 */
import { createHash } from 'node:crypto';
import {
  checkRun,
  commitStatus,
  minimalRepository,
  privateUser,
  pullRequest,
  reviewComment,
  simpleUser,
} from './fixtures';
import type { MergeMethod } from './bare-repo';
import { closeReferencedIssues, issueRoutes } from './issues';
import type { CommentRecord, GitHubState, PullRecord, UserRecord } from './records';

export interface Call {
  viewer: UserRecord;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  ifNoneMatch: string | undefined;
}

export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const DOCS = 'https://docs.github.com/rest';
const fail = (status: number, message: string): Answer => ({
  status,
  body: { message, documentation_url: DOCS },
});
const mayWrite = (u: UserRecord): boolean => ['admin', 'maintain', 'write'].includes(u.role);
const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** A GET answered with an ETag; 304 (no body) when the client's If-None-Match still holds. */
function conditional(call: Call, body: unknown): Answer {
  const etag = `W/"${createHash('sha1').update(JSON.stringify(body)).digest('hex')}"`;
  if (call.ifNoneMatch === etag) return { status: 304, body: null, headers: { etag } };
  return { status: 200, body, headers: { etag } };
}

function pullOf(s: GitHubState, call: Call): PullRecord | undefined {
  return s.pulls.find((p) => p.number === Number(call.params.pull_number));
}

function combinedState(states: string[]): string {
  if (states.some((x) => x === 'failure' || x === 'error')) return 'failure';
  if (states.length === 0 || states.some((x) => x === 'pending')) return 'pending';
  return 'success';
}

/** The latest status per context, newest first, as GitHub combines them. */
function latestStatuses(s: GitHubState, sha: string) {
  const seen = new Set<string>();
  return [...s.statuses]
    .reverse()
    .filter((x) => x.sha === sha && !seen.has(x.context) && seen.add(x.context));
}

function createPull(s: GitHubState, call: Call): Answer {
  if (!mayWrite(call.viewer)) return fail(403, 'Resource not accessible by personal access token');
  const head = String(call.body.head).replace(/^[^:]+:/, '');
  const base = String(call.body.base);
  const headSha = s.branches.get(head);
  const baseSha = s.branches.get(base);
  if (!headSha || !baseSha) return fail(422, 'Validation Failed: head or base does not exist');
  if (s.pulls.some((p) => p.head === head && p.state === 'open')) {
    return fail(422, `Validation Failed: A pull request already exists for ${s.owner.login}:${head}.`);
  }
  if (s.git.isAncestor(headSha, baseSha)) {
    return fail(422, `Validation Failed: No commits between ${base} and ${head}`);
  }
  const at = now();
  const pull: PullRecord = {
    number: s.nextNumber++,
    id: s.nextId++,
    head,
    headSha,
    base,
    baseSha,
    title: String(call.body.title ?? ''),
    body: typeof call.body.body === 'string' ? call.body.body : null,
    draft: call.body.draft === true,
    state: 'open',
    merged: false,
    mergeCommitSha: null,
    author: call.viewer,
    createdAt: at,
    updatedAt: at,
  };
  s.pulls.push(pull);
  return { status: 201, body: pullRequest(s.api, s.repo, pull) };
}

function updatePull(s: GitHubState, call: Call): Answer {
  const pull = pullOf(s, call);
  if (!pull) return fail(404, 'Not Found');
  if (!mayWrite(call.viewer)) return fail(403, 'Resource not accessible by personal access token');
  if (typeof call.body.title === 'string') pull.title = call.body.title;
  if (typeof call.body.body === 'string') pull.body = call.body.body;
  if (typeof call.body.base === 'string') {
    const baseSha = s.branches.get(call.body.base);
    if (!baseSha) return fail(422, `Validation Failed: base ${call.body.base} does not exist`);
    Object.assign(pull, { base: call.body.base, baseSha });
  }
  if (call.body.state === 'closed' || call.body.state === 'open') pull.state = call.body.state;
  pull.updatedAt = now();
  return { status: 200, body: pullRequest(s.api, s.repo, pull) };
}

function merge(s: GitHubState, call: Call): Answer {
  const pull = pullOf(s, call);
  if (!pull) return fail(404, 'Not Found');
  if (!mayWrite(call.viewer)) return fail(403, 'Must have admin rights to Repository.');
  if (pull.merged || pull.state !== 'open') return fail(405, 'Pull Request is not mergeable');
  if (pull.draft) return fail(405, 'Pull Request is still a draft');
  if (typeof call.body.sha === 'string' && call.body.sha !== pull.headSha) {
    return fail(409, 'Head branch was modified. Review and try the merge again.');
  }
  const passed = new Set(
    latestStatuses(s, pull.headSha)
      .filter((x) => x.state === 'success')
      .map((x) => x.context),
  );
  const missing = s.requiredContexts.find((c) => !passed.has(c));
  if (missing) return fail(405, `Required status check "${missing}" is expected.`);
  const method = (call.body.merge_method ?? 'merge') as MergeMethod;
  const title =
    typeof call.body.commit_title === 'string'
      ? call.body.commit_title
      : method === 'squash'
        ? `${pull.title} (#${pull.number})`
        : `Merge pull request #${pull.number} from ${s.owner.login}/${pull.head}`;
  const extra = typeof call.body.commit_message === 'string' ? call.body.commit_message : pull.title;
  const sha = s.git.merge(pull.base, pull.baseSha, pull.headSha, method, `${title}\n\n${extra}`);
  if (!sha) return fail(405, 'Merge conflict between base and head');
  Object.assign(pull, { merged: true, state: 'closed', mergeCommitSha: sha, updatedAt: now() });
  s.branches.set(pull.base, sha);
  if (pull.base === s.repo.defaultBranch) closeReferencedIssues(s, pull.body ?? '');
  return { status: 200, body: { sha, merged: true, message: 'Pull Request successfully merged' } };
}

function addComment(s: GitHubState, call: Call, inReplyTo: CommentRecord | null): Answer {
  const pull = pullOf(s, call);
  if (!pull) return fail(404, 'Not Found');
  const first = inReplyTo ?? s.comments.find((c) => c.id === Number(call.body.in_reply_to));
  const comment: CommentRecord = {
    id: s.nextId++,
    pull: pull.number,
    threadId: '',
    inReplyTo: first ? first.id : null,
    path: first ? first.path : String(call.body.path ?? ''),
    line: first ? first.line : typeof call.body.line === 'number' ? call.body.line : null,
    commitId: first ? first.commitId : String(call.body.commit_id ?? pull.headSha),
    body: String(call.body.body ?? ''),
    author: call.viewer,
    at: now(),
  };
  comment.threadId = first ? first.threadId : `PRRT_${comment.id}`;
  s.comments.push(comment);
  return { status: 201, body: reviewComment(s.api, s.repo, comment) };
}

function permission(s: GitHubState, call: Call): Answer {
  const user = s.users.find((u) => u.login === call.params.username);
  if (!user) return fail(404, 'Not Found');
  const legacy: Record<UserRecord['role'], string> = {
    admin: 'admin',
    maintain: 'write',
    write: 'write',
    triage: 'read',
    read: 'read',
    none: 'read', // a public repository: anyone may read
  };
  return {
    status: 200,
    body: {
      permission: legacy[user.role],
      role_name: user.role === 'none' ? 'read' : user.role,
      user: { ...simpleUser(s.api, user), role_name: user.role === 'none' ? 'read' : user.role },
    },
  };
}

export const routes: Record<string, (s: GitHubState, call: Call) => Answer> = {
  ...issueRoutes,
  'users/get-authenticated': (s, call) => ({ status: 200, body: privateUser(s.api, call.viewer) }),
  'pulls/list': (s, call) => {
    const state = call.query.get('state') ?? 'open';
    const head = call.query.get('head');
    const base = call.query.get('base');
    const list = s.pulls.filter(
      (p) =>
        (state === 'all' || p.state === state) &&
        (!head || `${s.owner.login}:${p.head}` === head) &&
        (!base || p.base === base),
    );
    return { status: 200, body: list.map((p) => pullRequest(s.api, s.repo, p)) };
  },
  'pulls/create': createPull,
  'pulls/get': (s, call) => {
    const pull = pullOf(s, call);
    if (!pull) return fail(404, 'Not Found');
    const reviewComments = s.comments.filter((c) => c.pull === pull.number).length;
    return conditional(call, pullRequest(s.api, s.repo, pull, reviewComments));
  },
  'pulls/update': updatePull,
  'pulls/merge': merge,
  'pulls/list-review-comments': (s, call) => {
    const pull = pullOf(s, call);
    if (!pull) return fail(404, 'Not Found');
    const list = s.comments.filter((c) => c.pull === pull.number);
    return { status: 200, body: list.map((c) => reviewComment(s.api, s.repo, c)) };
  },
  'pulls/create-review-comment': (s, call) => addComment(s, call, null),
  'pulls/get-review-comment': (s, call) => {
    const c = s.comments.find((x) => x.id === Number(call.params.comment_id));
    return c ? { status: 200, body: reviewComment(s.api, s.repo, c) } : fail(404, 'Not Found');
  },
  'pulls/create-reply-for-review-comment': (s, call) => {
    const first = s.comments.find((c) => c.id === Number(call.params.comment_id));
    if (!first) return fail(404, 'Not Found');
    // GitHub's documentation: "Replies to replies are not supported"; the stand-in refuses them outright.
    if (first.inReplyTo !== null) return fail(404, 'Not Found (replies to replies are not supported)');
    return addComment(s, call, first);
  },
  'repos/get-collaborator-permission-level': permission,
  'repos/create-commit-status': (s, call) => {
    if (!mayWrite(call.viewer)) return fail(404, 'Not Found');
    const record = {
      id: s.nextId++,
      sha: call.params.sha,
      state: call.body.state as 'error' | 'failure' | 'pending' | 'success',
      context: typeof call.body.context === 'string' ? call.body.context : 'default',
      description: typeof call.body.description === 'string' ? call.body.description : null,
      targetUrl: typeof call.body.target_url === 'string' ? call.body.target_url : null,
      creator: call.viewer,
      at: now(),
    };
    s.statuses.push(record);
    const body = { ...commitStatus(s.api, s.repo, record), creator: simpleUser(s.api, call.viewer) };
    return { status: 201, body };
  },
  'repos/get-combined-status-for-ref': (s, call) => {
    const sha = s.branches.get(call.params.ref) ?? call.params.ref;
    const statuses = latestStatuses(s, sha);
    return conditional(call, {
      state: combinedState(statuses.map((x) => x.state)),
      sha,
      total_count: statuses.length,
      statuses: statuses.map((x) => commitStatus(s.api, s.repo, x)),
      repository: minimalRepository(s.api, s.repo),
      commit_url: `${s.api}/repos/${s.owner.login}/${s.repo.name}/commits/${sha}`,
      url: `${s.api}/repos/${s.owner.login}/${s.repo.name}/commits/${sha}/status`,
    });
  },
  'checks/create': (s, call) => {
    const b = call.body;
    const output = (b.output ?? {}) as Record<string, unknown>;
    const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
    const record = {
      id: s.nextId++,
      sha: String(b.head_sha),
      name: String(b.name),
      status: (b.conclusion ? 'completed' : (b.status ?? 'queued')) as 'queued' | 'in_progress' | 'completed',
      conclusion: str(b.conclusion),
      detailsUrl: str(b.details_url),
      title: str(output.title),
      summary: str(output.summary),
      text: str(output.text),
      at: now(),
    };
    s.checkRuns.push(record);
    return { status: 201, body: checkRun(s.api, s.repo, record) };
  },
  'checks/list-for-ref': (s, call) => {
    const sha = s.branches.get(call.params.ref) ?? call.params.ref;
    // `filter=latest` (the default): the newest run of each name.
    const seen = new Set<string>();
    const all = s.checkRuns.filter((c) => c.sha === sha).reverse();
    const runs =
      call.query.get('filter') === 'all' ? all : all.filter((c) => !seen.has(c.name) && seen.add(c.name));
    return conditional(call, {
      total_count: runs.length,
      check_runs: runs.map((c) => checkRun(s.api, s.repo, c)),
    });
  },
};
