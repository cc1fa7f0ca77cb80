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
import { FilterGaps } from './filters';
import { runGraphQL } from './graphql';
import {
  DEFAULT_STATES,
  type IssueRecord,
  type LinearWorkspace,
  type StateType,
  type TeamRecord,
  type UserRecord,
  findIssue,
  newId,
  newWorkspace,
  tick,
} from './records';

export interface LinearStandIn extends StandIn {
  /** What `apiUrl` points at: `http://127.0.0.1:PORT/graphql`. */
  apiUrl: string;
  workspace: LinearWorkspace;
  violations: string[];
  /** Each request's operation name, in order (`sagaIssue`, `createComment`, …): for counting calls. */
  operations: string[];
  addTeam(key: string, name?: string, states?: Array<[string, StateType]>): TeamRecord;
  /** A user in `teams` (keys) with an API key of their own; a guest is in them as a guest. */
  addUser(displayName: string, teams: string[], opts?: { guest?: boolean }): UserRecord;
  addIssue(
    team: string,
    fields: { title: string; description?: string; labels?: string[]; state?: string; parent?: string },
  ): IssueRecord;
  addComment(issue: string, author: UserRecord, body: string): string;
  addRelation(issue: string, related: string, type?: 'blocks' | 'related'): void;
  /** The issue's label names and state name now. */
  look(issue: string): { labels: string[]; state: string };
  /** The next `count` requests answer `status` (429: rate limited, with `retryAfterSeconds`). */
  failNext(count: number, status: 429 | 503, retryAfterSeconds?: number): void;
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
  violations.push(...outcome.violations);
  send(res, outcome.status, outcome.body);
}

export async function startLinearStandIn(): Promise<LinearStandIn> {
  const w = newWorkspace();
  const book: Book = { w, violations: [], operations: [], failures: [] };
  const server = await startRecordingServer((req, res) => handle(book, req, res));
  w.baseUrl = server.url;
  const teamOf = (key: string) => {
    const team = w.teams.find((t) => t.key === key);
    if (!team) throw new Error(`no team ${key} in the Linear stand-in`);
    return team;
  };
  const issueOf = (id: string) => {
    const issue = findIssue(w, id);
    if (!issue) throw new Error(`no issue ${id} in the Linear stand-in`);
    return issue;
  };
  const labelId = (teamId: string, name: string) => {
    const found = w.labels.find((l) => l.name === name && (l.teamId === teamId || l.teamId === null));
    if (found) return found.id;
    const id = newId();
    w.labels.push({ id, name, teamId, color: '#bec2c8' });
    return id;
  };
  return {
    ...server,
    apiUrl: `${server.url}/graphql`,
    workspace: w,
    violations: book.violations,
    operations: book.operations,
    addTeam(key, name = key, states = DEFAULT_STATES) {
      const team = { id: newId(), key, name };
      w.teams.push(team);
      states.forEach(([n, type], position) =>
        w.states.push({ id: newId(), teamId: team.id, name: n, type, position }),
      );
      return team;
    },
    addUser(displayName, teams, opts = {}) {
      const user: UserRecord = {
        id: newId(),
        name: `${displayName[0]!.toUpperCase()}${displayName.slice(1)} Example`,
        displayName,
        email: `${displayName}@example.com`,
        guest: opts.guest ?? false,
        active: true,
        apiKey: `lin_api_${displayName}${newId().replace(/-/g, '')}`,
        teamIds: teams.map((k) => teamOf(k).id),
      };
      w.users.push(user);
      return user;
    },
    addIssue(key, fields) {
      const team = teamOf(key);
      const states = w.states.filter((s) => s.teamId === team.id);
      const state = states.find((s) => s.name === (fields.state ?? 'Todo')) ?? states[0]!;
      const at = tick(w);
      const issue: IssueRecord = {
        id: newId(),
        teamId: team.id,
        number: w.issues.filter((i) => i.teamId === team.id).length + 1,
        title: fields.title,
        description: fields.description ?? null,
        stateId: state.id,
        labelIds: (fields.labels ?? []).map((n) => labelId(team.id, n)),
        parentId: fields.parent ? issueOf(fields.parent).id : null,
        createdAt: at,
        updatedAt: at,
      };
      w.issues.push(issue);
      return issue;
    },
    addComment(issue, author, body) {
      const at = tick(w);
      const id = newId();
      w.comments.push({
        id,
        issueId: issueOf(issue).id,
        userId: author.id,
        body,
        createdAt: at,
        updatedAt: at,
        editedAt: null,
      });
      return id;
    },
    addRelation(issue, related, type = 'related') {
      w.relations.push({
        id: newId(),
        issueId: issueOf(issue).id,
        relatedIssueId: issueOf(related).id,
        type,
      });
    },
    look(issue) {
      const i = issueOf(issue);
      return {
        labels: w.labels
          .filter((l) => i.labelIds.includes(l.id))
          .map((l) => l.name)
          .sort(),
        state: w.states.find((s) => s.id === i.stateId)?.name ?? '?',
      };
    },
    failNext(count, status, retryAfterSeconds) {
      for (let n = 0; n < count; n++) book.failures.push({ status, retryAfter: retryAfterSeconds });
    },
  };
}
