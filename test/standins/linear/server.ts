/**
 * A stateful stand-in of Linear's GraphQL API on 127.0.0.1 (`POST /graphql`, as @linear/sdk sends to its
 * `apiUrl`). Every document is validated against Linear's published schema before it is served
 * (graphql.ts); what fails, and any token seen outside the Authorization header, lands in `violations`,
 * which a test asserts empty. The Authorization header must be one user's API key, as Linear's personal
 * keys are sent (no `Bearer`); that user is the viewer. `failNext` makes the next requests answer 429 (with
 * Linear's RATELIMITED error and a Retry-After) or 503, as a busy or broken Linear would.
 */
import type http from 'node:http';
import { type RecordedRequest, type StandIn, startRecordingServer } from '../script';
import { workspaceBuilders, type WorkspaceBuilders } from './builders';
import { FilterGaps } from './filters';
import { runGraphQL } from './graphql';
import { type LinearWorkspace, newWorkspace } from './records';

export interface LinearStandIn extends StandIn, WorkspaceBuilders {
  /** What `apiUrl` points at: `http://127.0.0.1:PORT/graphql`. */
  apiUrl: string;
  workspace: LinearWorkspace;
  violations: string[];
  /** Each request's operation name, in order (`sagaIssue`, `createComment`, …): for counting calls. */
  operations: string[];
  /** The next `count` requests answer `status` (429: rate limited, with `retryAfterSeconds`). */
  failNext(count: number, status: 429 | 503, retryAfterSeconds?: number): void;
  /** `change` runs once, right after the next `operation` is answered: someone acting meanwhile. */
  afterNext(operation: string, change: () => void): void;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

const authError = {
  message: 'Authentication required, not authenticated',
  extensions: {
    type: 'authentication error',
    code: 'AUTHENTICATION_ERROR',
    userPresentableMessage: 'You need to authenticate to access this operation.',
  },
};

interface Book {
  w: LinearWorkspace;
  violations: string[];
  operations: string[];
  failures: Array<{ status: 429 | 503; retryAfter?: number }>;
  after: Map<string, () => void>;
}

async function handle(book: Book, req: RecordedRequest, res: http.ServerResponse): Promise<void> {
  const { w, violations } = book;
  const { authorization, ...others } = req.headers;
  const outside = `${req.path}\n${JSON.stringify(others)}\n${req.raw.toString('utf8')}`;
  const leaked = w.users.find((u) => outside.includes(u.apiKey));
  if (leaked)
    violations.push(`${req.method} ${req.path}: ${leaked.displayName}'s API key outside Authorization`);
  if (req.method !== 'POST' || new URL(req.path, 'http://x').pathname !== '/graphql') {
    violations.push(`${req.method} ${req.path}: Linear's API is POST /graphql only`);
    send(res, 404, { errors: [{ message: 'Not found' }] });
    return;
  }
  const failure = book.failures.shift();
  if (failure?.status === 429) {
    book.operations.push('(rate limited)');
    const error = {
      message: 'Rate limit exceeded',
      extensions: { type: 'ratelimited', code: 'RATELIMITED', userPresentableMessage: 'Rate limit exceeded' },
    };
    const wait: Record<string, string> =
      failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {};
    send(res, 429, { errors: [error] }, { ...wait, 'x-ratelimit-requests-remaining': '0' });
    return;
  }
  if (failure?.status === 503) {
    book.operations.push('(unavailable)');
    res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
    return;
  }
  const viewer = w.users.find((u) => u.apiKey === authorization);
  if (!viewer || !viewer.active) {
    book.operations.push('(unauthenticated)');
    send(res, 400, { errors: [authError] });
    return;
  }
  const outcome = await runGraphQL({ w, viewer, gaps: new FilterGaps() }, req.body);
  book.operations.push(outcome.operation);
  const change = book.after.get(outcome.operation);
  book.after.delete(outcome.operation);
  change?.();
  violations.push(...outcome.violations);
  send(res, outcome.status, outcome.body);
}

export async function startLinearStandIn(): Promise<LinearStandIn> {
  const w = newWorkspace();
  const book: Book = { w, violations: [], operations: [], failures: [], after: new Map() };
  const server = await startRecordingServer((req, res) => handle(book, req, res));
  w.baseUrl = server.url;
  return {
    ...server,
    apiUrl: `${server.url}/graphql`,
    workspace: w,
    violations: book.violations,
    operations: book.operations,
    ...workspaceBuilders(w),
    afterNext(operation, change) {
      book.after.set(operation, change);
    },
    failNext(count, status, retryAfterSeconds) {
      for (let n = 0; n < count; n++) book.failures.push({ status, retryAfter: retryAfterSeconds });
    },
  };
}
