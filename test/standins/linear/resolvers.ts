/**
 * What the Linear stand-in answers: views of its records in the schema's shapes (a field is a value or a
 * function of the field's arguments; fields a view leaves out get a placeholder of their type, graphql.ts)
 * and the root fields and mutations the tracker adapter uses. Refusals are GraphQL errors carrying Linear's
 * `extensions.type`, which @linear/sdk turns into its typed errors.
 */
import { GraphQLError } from 'graphql';
import { FilterGaps, matchIssue, matchLabel } from './filters';
import {
  type CommentRecord,
  type IssueRecord,
  type LabelRecord,
  type LinearWorkspace,
  type StateRecord,
  type TeamRecord,
  type UserRecord,
  findIssue,
  findTeam,
  identifierOf,
  newId,
  tick,
} from './records';

type Args = Record<string, unknown>;
/** Linear's largest page. */
export const MAX_FIRST = 250;

export function linearError(message: string, type: string, userPresentableMessage = message): GraphQLError {
  const code = type.toUpperCase().replace(/ /g, '_');
  return new GraphQLError(message, { extensions: { type, code, userError: true, userPresentableMessage } });
}

const notFound = (what: string) =>
  linearError(`Entity not found: ${what}`, 'invalid input', `Could not find referenced ${what}.`);

export interface Served {
  w: LinearWorkspace;
  viewer: UserRecord;
  /** Filter keys and arguments the stand-in does not implement: violations. */
  gaps: FilterGaps;
}

/** A connection page by `first`/`after` (cursor = the node's id), oldest first as Linear's default order. */
function connection<T extends { id: string }>(s: Served, where: string, items: T[], args: Args) {
  if (args.filter !== undefined && args.filter !== null) s.gaps.gap(where, 'filter (on this connection)');
  if (args.last !== undefined || args.before !== undefined) s.gaps.gap(where, 'last/before');
  const first = typeof args.first === 'number' ? args.first : 50;
  if (first > MAX_FIRST) throw linearError(`first must be at most ${MAX_FIRST}`, 'invalid input');
  const start = typeof args.after === 'string' ? items.findIndex((i) => i.id === args.after) + 1 : 0;
  const nodes = items.slice(start, start + first);
  return {
    nodes,
    pageInfo: {
      hasNextPage: start + first < items.length,
      hasPreviousPage: start > 0,
      startCursor: nodes[0]?.id ?? null,
      endCursor: nodes.at(-1)?.id ?? null,
    },
  };
}

export const userView = (u: UserRecord) => ({
  id: u.id,
  name: u.name,
  displayName: u.displayName,
  email: u.email,
  guest: u.guest,
  active: u.active,
  admin: false,
});

const teamView = (s: Served, t: TeamRecord) => ({
  id: t.id,
  key: t.key,
  name: t.name,
  states: (a: Args) =>
    connection(s, 'team.states', s.w.states.filter((x) => x.teamId === t.id).map(stateView), a),
  labels: (a: Args) =>
    connection(s, 'team.labels', s.w.labels.filter((l) => l.teamId === t.id).map(labelView(s)), a),
  members: (a: Args) =>
    connection(s, 'team.members', s.w.users.filter((u) => u.teamIds.includes(t.id)).map(userView), a),
});

const stateView = (x: StateRecord) => ({ ...x, team: undefined });

const labelView = (s: Served) => (l: LabelRecord) => ({
  id: l.id,
  name: l.name,
  color: l.color,
  team: () => {
    const team = s.w.teams.find((t) => t.id === l.teamId);
    return team ? teamView(s, team) : null;
  },
});

function commentView(s: Served, c: CommentRecord) {
  const user = s.w.users.find((u) => u.id === c.userId);
  return {
    id: c.id,
    body: c.body,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    editedAt: c.editedAt,
    user: user ? userView(user) : null,
    botActor: null,
    issue: () =>
      issueView(
        s,
        s.w.issues.find((i) => i.id === c.issueId)!,
      ),
  };
}

function issueView(s: Served, i: IssueRecord): { id: string } & Record<string, unknown> {
  const w = s.w;
  const identifier = identifierOf(w, i);
  const others = (ids: string[]) => w.issues.filter((o) => ids.includes(o.id));
  return {
    id: i.id,
    identifier,
    number: i.number,
    title: i.title,
    description: i.description,
    url: `${w.baseUrl}/issue/${identifier}`,
    createdAt: i.createdAt,
    updatedAt: i.updatedAt,
    labelIds: i.labelIds,
    state: () => stateView(w.states.find((x) => x.id === i.stateId)!),
    team: () =>
      teamView(
        s,
        w.teams.find((t) => t.id === i.teamId)!,
      ),
    labels: (a: Args) =>
      connection(s, 'issue.labels', w.labels.filter((l) => i.labelIds.includes(l.id)).map(labelView(s)), a),
    comments: (a: Args) =>
      connection(
        s,
        'issue.comments',
        w.comments.filter((c) => c.issueId === i.id).map((c) => commentView(s, c)),
        a,
      ),
    children: (a: Args) =>
      connection(
        s,
        'issue.children',
        w.issues.filter((o) => o.parentId === i.id).map((o) => issueView(s, o)),
        a,
      ),
    relations: (a: Args) =>
      connection(
        s,
        'issue.relations',
        w.relations
          .filter((r) => r.issueId === i.id)
          .map((r) => ({
            ...r,
            issue: issueView(s, i),
            relatedIssue: issueView(s, others([r.relatedIssueId])[0]!),
          })),
        a,
      ),
    inverseRelations: (a: Args) =>
      connection(
        s,
        'issue.inverseRelations',
        w.relations
          .filter((r) => r.relatedIssueId === i.id)
          .map((r) => ({
            ...r,
            issue: issueView(s, others([r.issueId])[0]!),
            relatedIssue: issueView(s, i),
          })),
        a,
      ),
  };
}

/** Comments, labels and issue changes need the viewer in the issue's team (guests included). */
function requireMember(s: Served, teamId: string): void {
  if (!s.viewer.teamIds.includes(teamId))
    throw linearError('You do not have access to this team', 'forbidden');
}

const payload = (s: Served, key: string, value: unknown) => ({
  [key]: value,
  success: true,
  lastSyncId: ++s.w.lastSyncId,
});

function issueLabelCreate(s: Served, input: Args) {
  const teamId = typeof input.teamId === 'string' ? findTeam(s.w, input.teamId)?.id : null;
  if (input.teamId !== undefined && !teamId) throw notFound('Team');
  if (teamId) requireMember(s, teamId);
  const name = String(input.name);
  if (s.w.labels.some((l) => l.name === name && (l.teamId === teamId || l.teamId === null)))
    throw linearError(`Duplicate label name: ${name}`, 'invalid input');
  const label: LabelRecord = {
    id: newId(),
    name,
    teamId: teamId ?? null,
    color: String(input.color ?? '#bec2c8'),
  };
  s.w.labels.push(label);
  return payload(s, 'issueLabel', labelView(s)(label));
}

function issueUpdate(s: Served, id: string, input: Args) {
  const issue = findIssue(s.w, id);
  if (!issue) throw notFound('Issue');
  requireMember(s, issue.teamId);
  const known = ['labelIds', 'addedLabelIds', 'removedLabelIds', 'stateId'];
  for (const key of Object.keys(input)) if (!known.includes(key)) s.gaps.gap('IssueUpdateInput', key);
  const ids = (key: string) => (Array.isArray(input[key]) ? (input[key] as string[]) : null);
  const usable = (x: string) =>
    s.w.labels.some((l) => l.id === x && (l.teamId === null || l.teamId === issue.teamId));
  const [all, added, removed] = [ids('labelIds'), ids('addedLabelIds'), ids('removedLabelIds')];
  if (![...(all ?? []), ...(added ?? [])].every(usable)) throw notFound('IssueLabel');
  let next = all ?? issue.labelIds;
  next = [...next, ...(added ?? [])].filter((x) => !(removed ?? []).includes(x));
  issue.labelIds = [...new Set(next)];
  if (typeof input.stateId === 'string') {
    const state = s.w.states.find((x) => x.id === input.stateId && x.teamId === issue.teamId);
    if (!state) throw notFound('WorkflowState');
    issue.stateId = state.id;
  }
  issue.updatedAt = tick(s.w);
  return payload(s, 'issue', issueView(s, issue));
}

export function rootFor(s: Served) {
  const w = s.w;
  return {
    viewer: () => userView(s.viewer),
    issue: ({ id }: { id: string }) => {
      const issue = findIssue(w, id);
      if (!issue) throw notFound('Issue');
      return issueView(s, issue);
    },
    team: ({ id }: { id: string }) => {
      const team = findTeam(w, id);
      if (!team) throw notFound('Team');
      return teamView(s, team);
    },
    issues: (a: Args) => {
      const filter = (a.filter ?? {}) as Args;
      const found = w.issues.filter((i) => matchIssue(s.gaps, w, filter, i)).map((i) => issueView(s, i));
      return connection(s, 'issues', found, { ...a, filter: undefined });
    },
    issueLabels: (a: Args) => {
      const filter = (a.filter ?? {}) as Args;
      const found = w.labels.filter((l) => matchLabel(s.gaps, w, filter, l)).map(labelView(s));
      return connection(s, 'issueLabels', found, { ...a, filter: undefined });
    },
    commentCreate: ({ input }: { input: Args }) => {
      const issue = typeof input.issueId === 'string' ? findIssue(w, input.issueId) : undefined;
      if (!issue) throw notFound('Issue');
      requireMember(s, issue.teamId);
      const at = tick(w);
      const comment: CommentRecord = {
        id: newId(),
        issueId: issue.id,
        userId: s.viewer.id,
        body: String(input.body ?? ''),
        createdAt: at,
        updatedAt: at,
        editedAt: null,
      };
      w.comments.push(comment);
      return payload(s, 'comment', commentView(s, comment));
    },
    commentUpdate: ({ id, input }: { id: string; input: Args }) => {
      const comment = w.comments.find((c) => c.id === id);
      if (!comment) throw notFound('Comment');
      if (comment.userId !== s.viewer.id)
        throw linearError('You can only edit your own comments', 'forbidden');
      if (typeof input.body === 'string') comment.body = input.body;
      comment.updatedAt = comment.editedAt = tick(w);
      return payload(s, 'comment', commentView(s, comment));
    },
    issueUpdate: ({ id, input }: { id: string; input: Args }) => issueUpdate(s, id, input),
    issueLabelCreate: ({ input }: { input: Args }) => issueLabelCreate(s, input),
  };
}
