/**
 * The Linear stand-in's in-memory workspace: teams with their workflow states, users with team membership
 * (a guest is a member of the teams they were invited to), issues, comments, labels and relations. Ids are
 * UUIDs as Linear's are; times come from a clock that moves one second per record, so "oldest first" is
 * well defined however fast a test creates them.
 */
import { randomUUID } from 'node:crypto';

export type StateType = 'triage' | 'backlog' | 'unstarted' | 'started' | 'completed' | 'canceled';

export interface TeamRecord {
  id: string;
  key: string;
  name: string;
}
export interface UserRecord {
  id: string;
  name: string;
  displayName: string;
  email: string;
  guest: boolean;
  active: boolean;
  apiKey: string;
  teamIds: string[];
}
export interface StateRecord {
  id: string;
  teamId: string;
  name: string;
  type: StateType;
  position: number;
}
export interface LabelRecord {
  id: string;
  name: string;
  /** null: a workspace label, usable in every team. */
  teamId: string | null;
  color: string;
}
export interface IssueRecord {
  id: string;
  teamId: string;
  number: number;
  title: string;
  description: string | null;
  stateId: string;
  labelIds: string[];
  parentId: string | null;
  createdAt: string;
  updatedAt: string;
}
export interface CommentRecord {
  id: string;
  issueId: string;
  userId: string;
  body: string;
  createdAt: string;
  updatedAt: string;
  editedAt: string | null;
}
export interface RelationRecord {
  id: string;
  issueId: string;
  relatedIssueId: string;
  type: 'blocks' | 'related' | 'duplicate' | 'similar';
}

export interface LinearWorkspace {
  /** Where issue pages are said to live (the stand-in's own address). */
  baseUrl: string;
  teams: TeamRecord[];
  users: UserRecord[];
  states: StateRecord[];
  labels: LabelRecord[];
  issues: IssueRecord[];
  comments: CommentRecord[];
  relations: RelationRecord[];
  lastSyncId: number;
  clock: number;
}

export const newWorkspace = (): LinearWorkspace => ({
  baseUrl: '',
  teams: [],
  users: [],
  states: [],
  labels: [],
  issues: [],
  comments: [],
  relations: [],
  lastSyncId: 1000,
  clock: Date.parse('2026-01-05T09:00:00.000Z'),
});

/** The next moment of the workspace's clock, as Linear writes times. */
export function tick(w: LinearWorkspace): string {
  w.clock += 1000;
  return new Date(w.clock).toISOString();
}

export const newId = (): string => randomUUID();

/** A workflow like a new Linear team's, with an "In Review" started state after "In Progress". */
export const DEFAULT_STATES: Array<[string, StateType]> = [
  ['Backlog', 'backlog'],
  ['Todo', 'unstarted'],
  ['In Progress', 'started'],
  ['In Review', 'started'],
  ['Done', 'completed'],
  ['Canceled', 'canceled'],
];

export const identifierOf = (w: LinearWorkspace, issue: IssueRecord): string =>
  `${w.teams.find((t) => t.id === issue.teamId)?.key ?? '?'}-${issue.number}`;

/** An issue by its UUID or its identifier (`ENG-7`), as Linear's `issue(id:)` takes either. */
export function findIssue(w: LinearWorkspace, id: string): IssueRecord | undefined {
  return w.issues.find((i) => i.id === id || identifierOf(w, i) === id);
}

/** A team by its UUID or its key, as Linear's `team(id:)` takes either. */
export function findTeam(w: LinearWorkspace, id: string): TeamRecord | undefined {
  return w.teams.find((t) => t.id === id || t.key === id);
}
