/**
 * The Linear tracker adapter (docs/PROCEDURE.md §14) over @linear/sdk. A reference is `TEAM-N`, which
 * Linear's `issue(id:)` takes as it is. Reads are a few small documents sent through the SDK's client (one
 * request for what the SDK's models would fetch in many); writes use the SDK's own mutations. The API key is
 * read from the variable the connection names at each call and travels only in the Authorization header; a
 * failure becomes a ForgeCallError naming the call and Linear's message, with the token scrubbed out, and a
 * rate limit or an outage carries the wait Linear asked for (`retryAfterMs`).
 */
import { LinearClient } from '@linear/sdk';
import type { z } from 'zod';
import { DEFAULT_LINEAR_API } from '../../domain/config/intake-keys';
import type { IssueReply, TrackerConnection, TrackerIssue } from '../../domain/tracker/issue';
import type { TrackerRef, TrackerScope } from '../../domain/tracker/tracker-ref';
import { phaseLabel, type TrackerPhase } from '../../domain/tracker/workpad';
import { ForgeCallError } from '../forge/forge-error';
import type { Tracker } from './port';
import {
  COMMENTS,
  CommentsAnswer,
  type CommentNode,
  ISSUE,
  ISSUE_ID,
  IssueAnswer,
  IssueIdAnswer,
  LABELLED,
  LabelledAnswer,
  MEMBERS,
  MembersAnswer,
  type Page,
  PHASE,
  PhaseAnswer,
  type State,
  VIEWER_ID,
  ViewerIdAnswer,
} from './linear-documents';
import { failureOf } from './linear-failure';

export const LINEAR_TIMEOUT_MS = 15_000;
/** A runaway cursor never loops for ever: 50 pages of 100 is far past any issue's comments. */
const MAX_PAGES = 50;
const PHASE_LABEL_COLOR = '#5e6ad2';

interface Context {
  connection: TrackerConnection;
  env: NodeJS.ProcessEnv;
  spend: () => Promise<void>;
}

/** The key's variable is set: else a refusal naming the VARIABLE (never a value), before any call. */
function tokenOf(c: Context): string {
  const token = c.env[c.connection.tokenEnv];
  if (!token || token.trim() === '') {
    throw new ForgeCallError(
      'token',
      null,
      `the linear tracker token is missing: set the environment variable ${c.connection.tokenEnv} (intake.linear.token_env) for the worker`,
    );
  }
  return token;
}

/** One request through a fresh SDK client: the key read now, a timeout of its own, no redirect followed. */
async function call<T>(c: Context, name: string, run: (client: LinearClient) => Promise<T>): Promise<T> {
  const token = tokenOf(c);
  let client: LinearClient;
  try {
    client = new LinearClient({
      apiKey: token,
      apiUrl: c.connection.url || DEFAULT_LINEAR_API,
      signal: AbortSignal.timeout(LINEAR_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (error) {
    // The SDK refuses a plain-http URL that is not local: a setting to fix, not a call to try again.
    throw new ForgeCallError('config', 422, `Linear ${name}: ${(error as Error).message}`);
  }
  await c.spend();
  try {
    return await run(client);
  } catch (error) {
    throw failureOf(name, error, token);
  }
}

async function query<T>(
  c: Context,
  name: string,
  document: string,
  variables: Record<string, unknown>,
  schema: z.ZodType<T>,
): Promise<T> {
  const answer = await call(c, name, (client) => client.client.rawRequest(document, variables));
  const parsed = schema.safeParse(answer.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ForgeCallError(name, 502, `Linear ${name}: unexpected answer at ${issue?.path.join('.')}`);
  }
  return parsed.data;
}

async function allPages<N>(next: (after: string | null) => Promise<Page<N>>): Promise<N[]> {
  const all: N[] = [];
  let after: string | null = null;
  for (let i = 0; i < MAX_PAGES; i++) {
    const p: Page<N> = await next(after);
    all.push(...p.nodes);
    if (!p.pageInfo.hasNextPage || !p.pageInfo.endCursor) break;
    after = p.pageInfo.endCursor;
  }
  return all;
}

function identifierOf(ref: TrackerRef): string {
  if (ref.kind !== 'linear') {
    throw new ForgeCallError('reference', 422, `a ${ref.kind} reference was given to the linear tracker`);
  }
  return `${ref.team}-${ref.number}`;
}

const byCreated = <T extends { createdAt: string }>(a: T, b: T) => a.createdAt.localeCompare(b.createdAt);

/** The issue's comments oldest first, and its team's id (for membership). */
async function commentsOf(c: Context, ref: TrackerRef) {
  const id = identifierOf(ref);
  let teamId = '';
  const nodes = await allPages(async (after) => {
    const a = await query(c, 'list comments', COMMENTS, { id, after }, CommentsAnswer);
    teamId = a.issue.team.id;
    return a.issue.comments;
  });
  return { teamId, comments: nodes.sort(byCreated) };
}

const authorOf = (n: CommentNode): string => n.user?.displayName ?? n.botActor?.name ?? 'unknown';

/**
 * Where the phase moves the issue in its team's workflow, or null to leave it: planning and implementation
 * to the first `started` state, review to a started state named like "In Review" (when there is one), done
 * to the first `completed` state; a cancelled saga leaves the issue where people put it.
 */
export function targetState(phase: TrackerPhase, states: State[]): State | null {
  const ordered = [...states].sort((a, b) => a.position - b.position);
  const started = ordered.filter((s) => s.type === 'started');
  switch (phase) {
    case 'planning':
    case 'implementation':
      return started[0] ?? null;
    case 'review':
      return started.find((s) => /review/i.test(s.name)) ?? null;
    case 'done':
      return ordered.find((s) => s.type === 'completed') ?? null;
    default:
      return null;
  }
}

async function setPhase(c: Context, ref: TrackerRef, phase: TrackerPhase): Promise<void> {
  const id = identifierOf(ref);
  const { issue, issueLabels } = await query(c, 'read labels', PHASE, { id }, PhaseAnswer);
  const wanted = phaseLabel(phase);
  const teamId = issue.team.id;
  let labelId = issueLabels.nodes.find((l) => l.name === wanted && (!l.team || l.team.id === teamId))?.id;
  if (!labelId) {
    const made = await call(c, 'create label', (client) =>
      client.createIssueLabel({ name: wanted, teamId, color: PHASE_LABEL_COLOR }),
    );
    labelId = made.issueLabelId;
    if (!labelId)
      throw new ForgeCallError('create label', 502, `Linear create label: no label in the answer`);
  }
  // Added and removed rather than the whole list: a label someone sets meanwhile is not undone.
  const has = issue.labels.nodes;
  const removedLabelIds = has.filter((l) => l.name.startsWith('saga:') && l.id !== labelId).map((l) => l.id);
  const addedLabelIds = has.some((l) => l.id === labelId) ? [] : [labelId];
  const state = targetState(phase, issue.team.states.nodes);
  const stateId = state && state.id !== issue.state.id ? state.id : undefined;
  if (addedLabelIds.length + removedLabelIds.length === 0 && !stateId) return;
  await call(c, 'update issue', (client) =>
    client.updateIssue(issue.id, { addedLabelIds, removedLabelIds, ...(stateId ? { stateId } : {}) }),
  );
}

async function readIssue(c: Context, ref: TrackerRef): Promise<TrackerIssue> {
  const { issue } = await query(c, 'read issue', ISSUE, { id: identifierOf(ref) }, IssueAnswer);
  const { comments } = await commentsOf(c, ref);
  const related = [
    ...issue.children.nodes,
    ...issue.relations.nodes.map((r) => r.relatedIssue),
    ...issue.inverseRelations.nodes.map((r) => r.issue),
  ].map((r) => ({ ref: `linear:${r.identifier}`, title: r.title }));
  return {
    ref,
    url: issue.url,
    title: issue.title,
    body: issue.description ?? '',
    labels: issue.labels.nodes.map((l) => l.name),
    state: issue.state.name,
    comments: comments.map((n) => ({ id: n.id, author: authorOf(n), body: n.body, at: n.createdAt })),
    related: related.filter((r, i) => related.findIndex((o) => o.ref === r.ref) === i),
  };
}

async function labelledIssues(c: Context, scope: TrackerScope, label: string): Promise<TrackerRef[]> {
  if (scope.kind !== 'linear') {
    throw new ForgeCallError('reference', 422, `a ${scope.kind} scope was given to the linear tracker`);
  }
  const filter = {
    team: { key: { eq: scope.team } },
    labels: { some: { name: { eqIgnoreCase: label } } },
    state: { type: { nin: ['completed', 'canceled'] } },
  };
  const nodes = await allPages(
    async (after) => (await query(c, 'list issues', LABELLED, { filter, after }, LabelledAnswer)).issues,
  );
  return nodes.sort(byCreated).map((n) => ({ kind: 'linear', team: scope.team, number: n.number }));
}

async function teamMembers(c: Context, teamId: string): Promise<Set<string>> {
  const members = await allPages(
    async (after) =>
      (await query(c, 'list members', MEMBERS, { id: teamId, after }, MembersAnswer)).team.members,
  );
  return new Set(members.map((m) => m.id));
}

async function commentsAfter(
  c: Context,
  ref: TrackerRef,
  afterCommentId: string | null,
): Promise<IssueReply[]> {
  const { teamId, comments } = await commentsOf(c, ref);
  // An anchor that is gone (deleted) reads as no anchor: every comment, as the port's null does.
  const at = afterCommentId === null ? -1 : comments.findIndex((n) => n.id === afterCommentId);
  const after = comments.slice(at + 1);
  const members = after.some((n) => n.user) ? await teamMembers(c, teamId) : new Set<string>();
  return after.map((n) => ({
    id: n.id,
    author: authorOf(n),
    body: n.body,
    at: n.createdAt,
    // A guest may be in the team too, but only to comment: write access is a full member's.
    canWrite: !!n.user && n.user.active && !n.user.guest && members.has(n.user.id),
  }));
}

/** `spend` is awaited before every request: the token's per-minute budget (the tracker activities' hook). */
export function createLinearTracker(
  connection: TrackerConnection,
  env: NodeJS.ProcessEnv = process.env,
  spend: () => Promise<void> = async () => {},
): Tracker {
  const c: Context = { connection, env, spend };
  return {
    connection,
    issue: (ref) => readIssue(c, ref),
    labelledIssues: (scope, label) => labelledIssues(c, scope, label),
    async findComment(ref, marker) {
      // Only the key's own comments: Linear lets no one edit another's, so a copy of the marker by someone
      // else must not become the workpad (its edit would be refused for good).
      const me = (await query(c, 'who am I', VIEWER_ID, {}, ViewerIdAnswer)).viewer.id;
      const { comments } = await commentsOf(c, ref);
      return comments.find((n) => n.user?.id === me && n.body.includes(marker))?.id ?? null;
    },
    async createComment(ref, body) {
      const { issue } = await query(c, 'find issue', ISSUE_ID, { id: identifierOf(ref) }, IssueIdAnswer);
      const made = await call(c, 'create comment', (client) =>
        client.createComment({ issueId: issue.id, body }),
      );
      if (!made.commentId)
        throw new ForgeCallError('create comment', 502, 'Linear create comment: no comment');
      return made.commentId;
    },
    async editComment(_ref, commentId, body) {
      await call(c, 'edit comment', (client) => client.updateComment(commentId, { body }));
    },
    commentsAfter: (ref, afterCommentId) => commentsAfter(c, ref, afterCommentId),
    setPhase: (ref, phase) => setPhase(c, ref, phase),
    async whoAmI() {
      const me = await call(c, 'who am I', (client) => client.viewer);
      return { login: me.displayName || me.email };
    },
  };
}
