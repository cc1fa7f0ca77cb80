/** The GitHub stand-in's state: what it holds, before it is shaped as GitHub serves it (fixtures.ts). */
import type { BareRepo } from './bare-repo';

export interface UserRecord {
  login: string;
  id: number;
  type: 'User' | 'Bot';
  /** The token this user calls the API with. */
  token: string;
  /** The repository role: admin, maintain, write, triage, read or none. */
  role: 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';
}

export interface PullRecord {
  number: number;
  id: number;
  head: string;
  /** The head branch's commit: read from the repository while the PR is open, kept once it is closed. */
  headSha: string;
  base: string;
  baseSha: string;
  title: string;
  body: string | null;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  mergeCommitSha: string | null;
  author: UserRecord;
  createdAt: string;
  updatedAt: string;
}

export interface StatusRecord {
  id: number;
  sha: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: UserRecord;
  at: string;
}

export interface CheckRunRecord {
  id: number;
  sha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  detailsUrl: string | null;
  title: string | null;
  summary: string | null;
  text: string | null;
  at: string;
}

export interface CommentRecord {
  id: number;
  pull: number;
  threadId: string;
  inReplyTo: number | null;
  path: string;
  line: number | null;
  commitId: string;
  body: string;
  author: UserRecord;
  at: string;
}

export interface RepoRecord {
  id: number;
  owner: UserRecord;
  name: string;
  defaultBranch: string;
}

export interface LabelRecord {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

/** An issue (pull requests are kept apart, in `pulls`, though they share the numbers). */
export interface IssueRecord {
  number: number;
  id: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  labels: string[];
  author: UserRecord;
  /** The parent issue's number when this is a sub-issue. */
  parent: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface IssueCommentRecord {
  id: number;
  issue: number;
  body: string;
  author: UserRecord;
  at: string;
  updatedAt: string;
}

/** Everything the stand-in holds for its one repository. */
export interface GitHubState {
  /** The API's base URL (http://127.0.0.1:PORT). */
  api: string;
  owner: UserRecord;
  repo: RepoRecord;
  users: UserRecord[];
  /** The repository git pushes to and the API reads its branches from. */
  git: BareRepo;
  /** Branch name → head commit sha, as read from `git` at the start of each request. */
  branches: Map<string, string>;
  pulls: PullRecord[];
  statuses: StatusRecord[];
  checkRuns: CheckRunRecord[];
  comments: CommentRecord[];
  resolvedThreads: Set<string>;
  issues: IssueRecord[];
  issueComments: IssueCommentRecord[];
  labels: LabelRecord[];
  /** Branch protection: status contexts that must be `success` before a merge. */
  requiredContexts: string[];
  nextId: number;
  nextNumber: number;
}
