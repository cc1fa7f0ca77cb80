/**
 * A stateful stand-in of GitHub's API (REST and GraphQL) for one repository, on 127.0.0.1. Every request is
 * checked against GitHub's published OpenAPI description (openapi.ts) or GraphQL schema (graphql.ts) before
 * it is served, and every answer before it is sent: a request the description rejects gets 422 with the
 * validator's message, an answer it rejects gets 500, and both land in `violations`, which a test asserts
 * empty. Tokens map to users with repository roles; a token seen anywhere but the Authorization header is a
 * violation too. The API answers at the root (`/repos/…`, `/graphql`) and, as GitHub Enterprise Server does,
 * under `/api/v3` and `/api/graphql`; git pushes and fetches on the same port (git-http.ts) go to a real
 * bare repository (bare-repo.ts) that branches, pull request heads and merges are read from and made in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type RecordedRequest, type StandIn, startRecordingServer } from '../script';
import { BareRepo } from './bare-repo';
import { gitRoute, serveGit } from './git-http';
import { runGraphQL } from './graphql';
import { GitHubDescription } from './openapi';
import type { GitHubState, UserRecord } from './records';
import { routes } from './routes';

export interface GitHubStandIn extends StandIn {
  state: GitHubState;
  /** Requests and answers GitHub's description rejects, and tokens seen outside the Authorization header. */
  violations: string[];
  /** The operationId of each REST request (or `graphql`), in order: for counting calls. */
  operations: string[];
  /** The REST base as a GitHub Enterprise target names it: `http://127.0.0.1:PORT/api/v3`. */
  apiUrl: string;
  /** Where git pushes and fetches: `http://127.0.0.1:PORT/OWNER/REPO.git`. */
  gitUrl: string;
  /** A user with a role in the repository and their own token. */
  addUser(login: string, role: UserRecord['role'], type?: UserRecord['type']): UserRecord;
  /**
   * A commit writing `files` on `branch` (made from the default branch, or `from`, when it does not exist),
   * as a push of it would leave the repository; returns its sha.
   */
  commit(branch: string, files: Record<string, string>, message?: string, from?: string): string;
}

let description: GitHubDescription | undefined;

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'x-github-media-type': 'github.v3; format=json',
    ...headers,
  });
  res.end(body === null || body === undefined ? '' : JSON.stringify(body));
}

function viewerOf(s: GitHubState, req: RecordedRequest): UserRecord | undefined {
  const header = req.headers.authorization ?? '';
  const m = /^(?:Bearer|token) (\S+)$/.exec(header);
  return m ? s.users.find((u) => u.token === m[1]) : undefined;
}

function leakedToken(s: GitHubState, req: RecordedRequest): string | undefined {
  const { authorization: _auth, ...others } = req.headers;
  const outside = `${req.path}\n${JSON.stringify(others)}\n${JSON.stringify(req.body ?? '')}`;
  return s.users.find((u) => outside.includes(u.token))?.login;
}

interface Book {
  spec: GitHubDescription;
  state: GitHubState;
  violations: string[];
  operations: string[];
}

/** One request: authenticated, matched to its operation, checked, served, and its answer checked. */
async function handle(book: Book, req: RecordedRequest, res: http.ServerResponse): Promise<void> {
  const { state, violations, operations } = book;
  const url = new URL(req.path, 'http://127.0.0.1');
  const leaked = leakedToken(state, req);
  if (leaked)
    violations.push(`${req.method} ${url.pathname}: ${leaked}'s token outside the Authorization header`);
  const git = gitRoute(url);
  if (git) {
    operations.push(`git ${git.service}`);
    const fullName = `${state.owner.login}/${state.repo.name}`;
    if (`${git.owner}/${git.repo}` !== fullName) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Repository not found.\n');
      return;
    }
    const gitReq = { method: req.method, url, headers: req.headers, body: req.raw };
    await serveGit(state.git, fullName, state.users, gitReq, res);
    return;
  }
  syncFromRepo(state);
  // GitHub Enterprise Server's prefixes: the REST API under /api/v3, GraphQL at /api/graphql.
  url.pathname = url.pathname === '/api/graphql' ? '/graphql' : url.pathname.replace(/^\/api\/v3(?=\/)/, '');
  await handleApi(book, req, url, res);
}

/** The branches as the repository has them now; open pull requests follow their head and base. */
function syncFromRepo(state: GitHubState): void {
  state.branches = state.git.branches();
  for (const p of state.pulls) {
    if (p.state !== 'open') continue;
    p.headSha = state.branches.get(p.head) ?? p.headSha;
    p.baseSha = state.branches.get(p.base) ?? p.baseSha;
  }
}

async function handleApi(
  book: Book,
  req: RecordedRequest,
  url: URL,
  res: http.ServerResponse,
): Promise<void> {
  const { spec, state, violations, operations } = book;
  const owner = state.owner;
  const viewer = viewerOf(state, req);
  if (!viewer) {
    send(res, 401, {
      message: 'Requires authentication',
      documentation_url: 'https://docs.github.com/rest',
    });
    return;
  }
  if (req.method === 'POST' && url.pathname === '/graphql') {
    operations.push('graphql');
    const outcome = await runGraphQL(
      {
        owner: owner.login,
        repo: state.repo.name,
        pulls: state.pulls,
        comments: state.comments,
        resolvedThreads: state.resolvedThreads,
      },
      viewer,
      req.body,
    );
    violations.push(...outcome.violations.map((v) => `POST /graphql: ${v}`));
    send(res, outcome.status, outcome.body);
    return;
  }
  const found = spec.match(req.method, url.pathname);
  if (!found) {
    violations.push(`${req.method} ${url.pathname}: no such operation in GitHub's description`);
    send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    return;
  }
  const { op, pathParams } = found;
  operations.push(op.id);
  const problems = spec.checkRequest(op, pathParams, url.searchParams, req.body);
  if (problems.length > 0) {
    violations.push(...problems.map((p) => `${op.id}: ${p}`));
    send(res, 422, { message: problems.join('; '), documentation_url: 'https://docs.github.com/rest' });
    return;
  }
  const route = routes[op.id];
  if (!route) {
    violations.push(`${op.id}: not served by the stand-in`);
    send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    return;
  }
  const inm = req.headers['if-none-match'];
  const answer = route(state, {
    viewer,
    params: pathParams,
    query: url.searchParams,
    body: (req.body ?? {}) as Record<string, unknown>,
    ifNoneMatch: typeof inm === 'string' ? inm : undefined,
  });
  const wrong = spec.checkResponse(op, answer.status, answer.body);
  if (wrong.length > 0) {
    violations.push(...wrong.map((w) => `stand-in answer: ${w}`));
    send(res, 500, { message: wrong.join('; ') });
    return;
  }
  send(res, answer.status, answer.body, answer.headers);
}

export async function startGitHubStandIn(opts: {
  owner: string;
  repo: string;
  defaultBranch?: string;
}): Promise<GitHubStandIn> {
  const spec = (description ??= new GitHubDescription());
  const violations: string[] = [];
  const operations: string[] = [];
  const owner: UserRecord = {
    login: opts.owner,
    id: 1,
    type: 'User',
    token: `ghp_owner${Date.now()}`,
    role: 'admin',
  };
  const defaultBranch = opts.defaultBranch ?? 'main';
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-github-standin-'));
  const git = new BareRepo(root, opts.owner, opts.repo);
  git.init(defaultBranch, `# ${opts.repo}\n`);
  const state: GitHubState = {
    api: '',
    owner,
    repo: { id: 100, owner, name: opts.repo, defaultBranch },
    users: [owner],
    git,
    branches: git.branches(),
    pulls: [],
    statuses: [],
    checkRuns: [],
    comments: [],
    resolvedThreads: new Set(),
    issues: [],
    issueComments: [],
    labels: [],
    requiredContexts: [],
    nextId: 1000,
    nextNumber: 1,
  };

  const book: Book = { spec, state, violations, operations };
  const server = await startRecordingServer((req, res) => handle(book, req, res));
  state.api = server.url;

  return {
    ...server,
    apiUrl: `${server.url}/api/v3`,
    gitUrl: `${server.url}/${opts.owner}/${opts.repo}.git`,
    close: async () => {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
    state,
    violations,
    operations,
    addUser(login, role, type = 'User') {
      const user: UserRecord = { login, id: state.nextId++, type, token: `ghp_${login}${Date.now()}`, role };
      state.users.push(user);
      return user;
    },
    commit(branch, files, message = `Change ${Object.keys(files).join(', ')}`, from) {
      const sha = git.commit(branch, files, message, from);
      syncFromRepo(state);
      return sha;
    },
  };
}
