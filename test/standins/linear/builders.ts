/**
 * Test helpers that fill the Linear stand-in's workspace directly, as people using Linear would have: teams
 * with workflows, users with their teams and API keys, issues, comments and relations.
 */
import {
  DEFAULT_STATES,
  type IssueRecord,
  type LinearWorkspace,
  type StateType,
  type TeamRecord,
  type UserRecord,
  findIssue,
  newId,
  tick,
} from './records';

export interface WorkspaceBuilders {
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
}

function teamOf(w: LinearWorkspace, key: string): TeamRecord {
  const team = w.teams.find((t) => t.key === key);
  if (!team) throw new Error(`no team ${key} in the Linear stand-in`);
  return team;
}

function issueOf(w: LinearWorkspace, id: string): IssueRecord {
  const issue = findIssue(w, id);
  if (!issue) throw new Error(`no issue ${id} in the Linear stand-in`);
  return issue;
}

/** The label of that name usable in the team, made in the team when there is none. */
function labelId(w: LinearWorkspace, teamId: string, name: string): string {
  const found = w.labels.find((l) => l.name === name && (l.teamId === teamId || l.teamId === null));
  if (found) return found.id;
  const id = newId();
  w.labels.push({ id, name, teamId, color: '#bec2c8' });
  return id;
}

function addIssue(w: LinearWorkspace, key: string, fields: Parameters<WorkspaceBuilders['addIssue']>[1]) {
  const team = teamOf(w, key);
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
    labelIds: (fields.labels ?? []).map((n) => labelId(w, team.id, n)),
    parentId: fields.parent ? issueOf(w, fields.parent).id : null,
    createdAt: at,
    updatedAt: at,
  };
  w.issues.push(issue);
  return issue;
}

export function workspaceBuilders(w: LinearWorkspace): WorkspaceBuilders {
  return {
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
        teamIds: teams.map((k) => teamOf(w, k).id),
      };
      w.users.push(user);
      return user;
    },
    addIssue: (key, fields) => addIssue(w, key, fields),
    addComment(issue, author, body) {
      const at = tick(w);
      const id = newId();
      const issueId = issueOf(w, issue).id;
      w.comments.push({ id, issueId, userId: author.id, body, createdAt: at, updatedAt: at, editedAt: null });
      return id;
    },
    addRelation(issue, related, type = 'related') {
      const [issueId, relatedIssueId] = [issueOf(w, issue).id, issueOf(w, related).id];
      w.relations.push({ id: newId(), issueId, relatedIssueId, type });
    },
    look(issue) {
      const i = issueOf(w, issue);
      const labels = w.labels.filter((l) => i.labelIds.includes(l.id)).map((l) => l.name);
      return { labels: labels.sort(), state: w.states.find((s) => s.id === i.stateId)?.name ?? '?' };
    },
  };
}
