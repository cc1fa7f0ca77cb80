/**
 * The tracker port over Gitea's (and Forgejo's) `/api/v1` issues, checked against Gitea 1.27.3, on the
 * forge's HTTP client (forge/gitea-client.ts). Related issues are the issue's dependencies (the issues it
 * is blocked by), where the repository has dependencies enabled; an author's write access comes from
 * `collaborators/{user}/permission` (owner, admin and write count), which needs the token's user to be an
 * admin of the repository.
 */
import type { IssueComment, IssueReply, TrackerConnection, TrackerIssue } from '../../domain/tracker/issue';
import type { TrackerRef, TrackerScope } from '../../domain/tracker/tracker-ref';
import { phaseLabel, type TrackerPhase } from '../../domain/tracker/workpad';
import { GiteaClient } from '../forge/gitea-client';
import { WRITE_PERMISSIONS } from '../forge/gitea-map';
import type { Tracker } from './port';
import {
  GiteaCommentListSchema,
  GiteaCommentSchema,
  GiteaIssueListSchema,
  GiteaIssueSchema,
  GiteaLabelListSchema,
  GiteaLabelSchema,
  GiteaMeSchema,
  GiteaPermissionSchema,
} from './gitea-schemas';
import {
  isOtherSagaLabel,
  issueNumber,
  repoTarget,
  requireToken,
  spendFrom,
  withWriteAccess,
} from './tracker-common';
import { z } from 'zod';

const enc = encodeURIComponent;
/** The colour a missing `saga:` label is created with (Gitea wants `#rrggbb`). */
export const SAGA_LABEL_COLOR = '#5319e7';

export function createGiteaTracker(
  connection: TrackerConnection,
  env: NodeJS.ProcessEnv = process.env,
): Tracker {
  if (connection.kind !== 'gitea')
    throw new Error(`createGiteaTracker was given a ${connection.kind} connection`);
  return new GiteaTracker(connection, env);
}

class GiteaTracker implements Tracker {
  private readonly spend: () => Promise<void>;

  constructor(
    readonly connection: TrackerConnection,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.spend = spendFrom(connection);
  }

  private clientFor(where: TrackerRef | TrackerScope): GiteaClient {
    requireToken(this.connection, this.env);
    return new GiteaClient(repoTarget(this.connection, where), this.env, undefined, this.spend);
  }

  private issuePath(c: GiteaClient, ref: TrackerRef): string {
    return `${c.repoPath()}/issues/${issueNumber(ref)}`;
  }

  private async comments(ref: TrackerRef): Promise<IssueComment[]> {
    const c = this.clientFor(ref);
    const list = await c.call({
      call: 'list issue comments',
      method: 'GET',
      path: `${this.issuePath(c, ref)}/comments`,
      schema: GiteaCommentListSchema,
    });
    return list
      .map((x) => ({ id: String(x.id), author: x.user?.login ?? '', body: x.body ?? '', at: x.created_at }))
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  private async related(ref: TrackerRef): Promise<TrackerIssue['related']> {
    const c = this.clientFor(ref);
    const answer = await c.request({
      call: 'list issue dependencies',
      method: 'GET',
      path: `${this.issuePath(c, ref)}/dependencies?limit=50`,
      schema: GiteaIssueListSchema,
      // Dependencies switched off for the repository: the issue simply has none.
      acceptStatuses: [403, 404],
    });
    if (answer.kind !== 'ok') return [];
    return answer.data.map((d) => ({
      ref: d.repository ? `gitea:${d.repository.owner}/${d.repository.name}#${d.number}` : `#${d.number}`,
      title: d.title,
    }));
  }

  /** The label's id, the label created (with the saga's colour) when the repository lacks it. */
  private async labelId(ref: TrackerRef, name: string): Promise<number> {
    const c = this.clientFor(ref);
    const path = `${c.repoPath()}/labels`;
    const labels = await c.list({ call: 'list labels', path, schema: GiteaLabelListSchema });
    const found = labels.find((l) => l.name === name);
    if (found) return found.id;
    const created = await c.call({
      call: 'create label',
      method: 'POST',
      path,
      body: { name, color: SAGA_LABEL_COLOR, description: 'Set by the saga working on this issue' },
      schema: GiteaLabelSchema,
    });
    return created.id;
  }

  private async canWrite(ref: TrackerRef, login: string): Promise<boolean> {
    const c = this.clientFor(ref);
    const answer = await c.request({
      call: 'get collaborator permission',
      method: 'GET',
      path: `${c.repoPath()}/collaborators/${enc(login)}/permission`,
      schema: GiteaPermissionSchema,
      acceptStatuses: [404], // not a collaborator (or no such user): no write access
    });
    return answer.kind === 'ok' && WRITE_PERMISSIONS.has(answer.data.permission);
  }

  async issue(ref: TrackerRef): Promise<TrackerIssue> {
    const c = this.clientFor(ref);
    const path = this.issuePath(c, ref);
    const issue = await c.call({ call: 'get issue', method: 'GET', path, schema: GiteaIssueSchema });
    return {
      ref,
      url: issue.html_url,
      title: issue.title,
      body: issue.body ?? '',
      labels: (issue.labels ?? []).map((l) => l.name),
      state: issue.state,
      comments: await this.comments(ref),
      related: await this.related(ref),
    };
  }

  async labelledIssues(scope: TrackerScope, label: string): Promise<TrackerRef[]> {
    const c = this.clientFor(scope);
    const issues = await c.list({
      call: 'list labelled issues',
      path: `${c.repoPath()}/issues?state=open&type=issues&labels=${enc(label)}`,
      schema: GiteaIssueListSchema,
    });
    const repoScope = scope as Extract<TrackerScope, { kind: 'gitea' }>;
    return issues
      .filter((i) => !i.pull_request && (i.labels ?? []).some((l) => l.name === label))
      .sort((a, b) => a.number - b.number)
      .map((i) => ({ ...repoScope, number: i.number }));
  }

  async findComment(ref: TrackerRef, marker: string): Promise<string | null> {
    return (await this.comments(ref)).find((x) => x.body.includes(marker))?.id ?? null;
  }

  async createComment(ref: TrackerRef, body: string): Promise<string> {
    const c = this.clientFor(ref);
    const created = await c.call({
      call: 'create issue comment',
      method: 'POST',
      path: `${this.issuePath(c, ref)}/comments`,
      body: { body },
      schema: GiteaCommentSchema,
    });
    return String(created.id);
  }

  async editComment(ref: TrackerRef, commentId: string, body: string): Promise<void> {
    const c = this.clientFor(ref);
    await c.call({
      call: 'edit issue comment',
      method: 'PATCH',
      path: `${c.repoPath()}/issues/comments/${enc(commentId)}`,
      body: { body },
      schema: GiteaCommentSchema,
    });
  }

  async commentsAfter(ref: TrackerRef, afterCommentId: string | null): Promise<IssueReply[]> {
    const after = afterCommentId === null ? -1 : Number(afterCommentId);
    const later = (await this.comments(ref)).filter((x) => Number(x.id) > after);
    return withWriteAccess(later, (login) => this.canWrite(ref, login));
  }

  async setPhase(ref: TrackerRef, phase: TrackerPhase): Promise<void> {
    const c = this.clientFor(ref);
    const wanted = phaseLabel(phase);
    const id = await this.labelId(ref, wanted);
    const now = await c.call({
      call: 'add issue label',
      method: 'POST',
      path: `${this.issuePath(c, ref)}/labels`,
      body: { labels: [id] },
      schema: GiteaLabelListSchema,
    });
    for (const label of now.filter((l) => isOtherSagaLabel(l.name, wanted))) {
      await c.call({
        call: 'remove issue label',
        method: 'DELETE',
        path: `${this.issuePath(c, ref)}/labels/${label.id}`,
        schema: z.unknown(),
      });
    }
  }

  async whoAmI(): Promise<{ login: string }> {
    requireToken(this.connection, this.env);
    const { url, tokenEnv } = this.connection;
    const target = { kind: 'gitea' as const, url, owner: '-', repo: '-', tokenEnv };
    const c = new GiteaClient(target, this.env, undefined, this.spend);
    const me = await c.call({ call: 'get user', method: 'GET', path: '/user', schema: GiteaMeSchema });
    return { login: me.login };
  }
}
