/**
 * The tracker port over GitHub's REST issues API (api.github.com, or GitHub Enterprise's `…/api/v3`), on the
 * forge's HTTP client (forge/github-http.ts). Pull requests are issues to GitHub's list endpoint: they are
 * left out. Related issues are the issue's sub-issues (where the instance has them); an author's write
 * access is `collaborators/{user}/permission` being admin or write (maintain reads as write there).
 */
import { z } from 'zod';
import type { IssueComment, IssueReply, TrackerConnection, TrackerIssue } from '../../domain/tracker/issue';
import type { TrackerRef, TrackerScope } from '../../domain/tracker/tracker-ref';
import { phaseLabel, type TrackerPhase } from '../../domain/tracker/workpad';
import { gitHubHttp, type GitHubHttp, type RestRequest } from '../forge/github-http';
import { ForgeCallError } from '../forge/forge-error';
import type { Tracker } from './port';
import {
  isOtherSagaLabel,
  issueNumber,
  repoTarget,
  requireToken,
  spendFrom,
  withWriteAccess,
} from './tracker-common';

const enc = encodeURIComponent;
const PER_PAGE = 100;
const MAX_PAGES = 20;
/** The colour a missing `saga:` label is created with (GitHub wants `rrggbb`). */
const SAGA_LABEL_COLOR = '5319e7';

const Label = z.union([z.string(), z.object({ name: z.string().nullish() })]);
const IssueSchema = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
  state: z.string(),
  labels: z.array(Label),
  pull_request: z.unknown().optional(),
  repository_url: z.string().optional(),
});
const CommentSchema = z.object({
  id: z.number(),
  body: z.string().optional(),
  user: z.object({ login: z.string() }).nullable(),
  created_at: z.string(),
});
const LabelList = z.array(z.object({ name: z.string() }));

const labelName = (l: z.infer<typeof Label>): string => (typeof l === 'string' ? l : (l.name ?? ''));

export function createGithubTracker(
  connection: TrackerConnection,
  env: NodeJS.ProcessEnv = process.env,
): Tracker {
  if (connection.kind !== 'github')
    throw new Error(`createGithubTracker was given a ${connection.kind} connection`);
  return new GitHubTracker(connection, env);
}

async function ok<T>(http: GitHubHttp, req: RestRequest<T>): Promise<T> {
  const answer = await http.rest(req);
  if (answer.kind !== 'ok') throw new ForgeCallError(req.call, null, `GitHub ${req.call} gave no data`);
  return answer.data;
}

/** Every page of a list, in GitHub's order. */
async function pages<T>(http: GitHubHttp, req: RestRequest<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const query = { ...req.query, per_page: String(PER_PAGE), page: String(page) };
    const items = await ok(http, { ...req, query });
    all.push(...items);
    if (items.length < PER_PAGE) break;
  }
  return all;
}

class GitHubTracker implements Tracker {
  private readonly spend: () => Promise<void>;

  constructor(
    readonly connection: TrackerConnection,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.spend = spendFrom(connection);
  }

  /** The HTTP client and `/repos/OWNER/REPO` (encoded) of an issue's or scope's repository. */
  private httpFor(where: TrackerRef | TrackerScope): { http: GitHubHttp; repo: string } {
    requireToken(this.connection, this.env);
    const target = repoTarget(this.connection, where);
    return {
      http: gitHubHttp(target, this.env, undefined, this.spend),
      repo: `/repos/${enc(target.owner)}/${enc(target.repo)}`,
    };
  }

  private async comments(ref: TrackerRef): Promise<IssueComment[]> {
    const { http, repo } = this.httpFor(ref);
    const list = await pages(http, {
      call: 'list issue comments',
      method: 'GET',
      path: `${repo}/issues/${issueNumber(ref)}/comments`,
      schema: z.array(CommentSchema),
    });
    return list.map((x) => ({
      id: String(x.id),
      author: x.user?.login ?? '',
      body: x.body ?? '',
      at: x.created_at,
    }));
  }

  private async related(ref: TrackerRef): Promise<TrackerIssue['related']> {
    const { http, repo } = this.httpFor(ref);
    const answer = await http.rest({
      call: 'list sub-issues',
      method: 'GET',
      path: `${repo}/issues/${issueNumber(ref)}/sub_issues`,
      query: { per_page: String(PER_PAGE) },
      schema: z.array(IssueSchema),
      tolerate: [404, 410], // an instance or repository without sub-issues
    });
    if (answer.kind !== 'ok') return [];
    return answer.data.map((sub) => ({ ref: `#${sub.number}`, title: sub.title }));
  }

  private async canWrite(ref: TrackerRef, login: string): Promise<boolean> {
    const { http, repo } = this.httpFor(ref);
    const answer = await http.rest({
      call: 'get collaborator permission',
      method: 'GET',
      path: `${repo}/collaborators/${enc(login)}/permission`,
      schema: z.object({ permission: z.string() }),
      tolerate: [404],
    });
    return answer.kind === 'ok' && ['admin', 'write', 'maintain'].includes(answer.data.permission);
  }

  /** The label exists in the repository (created with the saga's colour when missing). */
  private async ensureLabel(ref: TrackerRef, name: string): Promise<void> {
    const { http, repo } = this.httpFor(ref);
    const schema = z.object({ name: z.string() });
    const found = await http.rest({
      call: 'get label',
      method: 'GET',
      path: `${repo}/labels/${enc(name)}`,
      schema,
      tolerate: [404],
    });
    if (found.kind === 'ok') return;
    await http.rest({
      call: 'create label',
      method: 'POST',
      path: `${repo}/labels`,
      body: { name, color: SAGA_LABEL_COLOR, description: 'Set by the saga working on this issue' },
      schema,
      tolerate: [422], // made meanwhile (a retried call): it exists, which is all that is wanted
    });
  }

  async issue(ref: TrackerRef): Promise<TrackerIssue> {
    const { http, repo } = this.httpFor(ref);
    const path = `${repo}/issues/${issueNumber(ref)}`;
    const issue = await ok(http, { call: 'get issue', method: 'GET', path, schema: IssueSchema });
    return {
      ref,
      url: issue.html_url,
      title: issue.title,
      body: issue.body ?? '',
      labels: issue.labels.map(labelName).filter(Boolean),
      state: issue.state,
      comments: await this.comments(ref),
      related: await this.related(ref),
    };
  }

  async labelledIssues(scope: TrackerScope, label: string): Promise<TrackerRef[]> {
    const { http, repo } = this.httpFor(scope);
    const list = await pages(http, {
      call: 'list labelled issues',
      method: 'GET',
      path: `${repo}/issues`,
      query: { state: 'open', labels: label, sort: 'created', direction: 'asc' },
      schema: z.array(IssueSchema),
    });
    const repoScope = scope as Extract<TrackerScope, { kind: 'github' }>;
    return list
      .filter((i) => i.pull_request === undefined)
      .sort((a, b) => a.number - b.number)
      .map((i) => ({ ...repoScope, number: i.number }));
  }

  async findComment(ref: TrackerRef, marker: string): Promise<string | null> {
    return (await this.comments(ref)).find((x) => x.body.includes(marker))?.id ?? null;
  }

  async createComment(ref: TrackerRef, body: string): Promise<string> {
    const { http, repo } = this.httpFor(ref);
    const created = await ok(http, {
      call: 'create issue comment',
      method: 'POST',
      path: `${repo}/issues/${issueNumber(ref)}/comments`,
      body: { body },
      schema: CommentSchema,
    });
    return String(created.id);
  }

  async editComment(ref: TrackerRef, commentId: string, body: string): Promise<void> {
    const { http, repo } = this.httpFor(ref);
    await ok(http, {
      call: 'edit issue comment',
      method: 'PATCH',
      path: `${repo}/issues/comments/${enc(commentId)}`,
      body: { body },
      schema: CommentSchema,
    });
  }

  async commentsAfter(ref: TrackerRef, afterCommentId: string | null): Promise<IssueReply[]> {
    const after = afterCommentId === null ? -1 : Number(afterCommentId);
    const later = (await this.comments(ref)).filter((x) => Number(x.id) > after);
    return withWriteAccess(later, (login) => this.canWrite(ref, login));
  }

  async setPhase(ref: TrackerRef, phase: TrackerPhase): Promise<void> {
    const { http, repo } = this.httpFor(ref);
    const wanted = phaseLabel(phase);
    await this.ensureLabel(ref, wanted);
    const labels = `${repo}/issues/${issueNumber(ref)}/labels`;
    const now = await ok(http, {
      call: 'add issue label',
      method: 'POST',
      path: labels,
      body: { labels: [wanted] },
      schema: LabelList,
    });
    for (const label of now.filter((l) => isOtherSagaLabel(l.name, wanted))) {
      await http.rest({
        call: 'remove issue label',
        method: 'DELETE',
        path: `${labels}/${enc(label.name)}`,
        schema: z.unknown(),
        tolerate: [404], // gone meanwhile
      });
    }
  }

  async whoAmI(): Promise<{ login: string }> {
    requireToken(this.connection, this.env);
    const { url, tokenEnv } = this.connection;
    const target = { kind: 'github' as const, url, owner: '-', repo: '-', tokenEnv };
    const me = await ok(gitHubHttp(target, this.env, undefined, this.spend), {
      call: 'get user',
      method: 'GET',
      path: '/user',
      schema: z.object({ login: z.string() }),
    });
    return { login: me.login };
  }
}
