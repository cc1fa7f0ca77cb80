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
import { isOtherSagaLabel, issueNumber, repoTarget, requireToken, spendFrom } from './tracker-common';
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
  const spend = spendFrom(connection);
  const clientFor = (where: TrackerRef | TrackerScope) => {
    requireToken(connection, env);
    return new GiteaClient(repoTarget(connection, where), env, undefined, spend);
  };
  const issuePath = (c: GiteaClient, ref: TrackerRef) => `${c.repoPath()}/issues/${issueNumber(ref)}`;

  async function comments(ref: TrackerRef): Promise<IssueComment[]> {
    const c = clientFor(ref);
    const list = await c.call({
      call: 'list issue comments',
      method: 'GET',
      path: `${issuePath(c, ref)}/comments`,
      schema: GiteaCommentListSchema,
    });
    return list
      .map((x) => ({ id: String(x.id), author: x.user?.login ?? '', body: x.body ?? '', at: x.created_at }))
      .sort((a, b) => Number(a.id) - Number(b.id));
  }

  async function related(ref: TrackerRef): Promise<TrackerIssue['related']> {
    const c = clientFor(ref);
    const answer = await c.request({
      call: 'list issue dependencies',
      method: 'GET',
      path: `${issuePath(c, ref)}/dependencies?limit=50`,
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

  async function labelId(ref: TrackerRef, name: string): Promise<number> {
    const c = clientFor(ref);
    const labels = await c.list({
      call: 'list labels',
      path: `${c.repoPath()}/labels`,
      schema: GiteaLabelListSchema,
    });
    const found = labels.find((l) => l.name === name);
    if (found) return found.id;
    const created = await c.call({
      call: 'create label',
      method: 'POST',
      path: `${c.repoPath()}/labels`,
      body: { name, color: SAGA_LABEL_COLOR, description: 'Set by the saga working on this issue' },
      schema: GiteaLabelSchema,
    });
    return created.id;
  }

  async function canWrite(ref: TrackerRef, login: string): Promise<boolean> {
    const c = clientFor(ref);
    const answer = await c.request({
      call: 'get collaborator permission',
      method: 'GET',
      path: `${c.repoPath()}/collaborators/${enc(login)}/permission`,
      schema: GiteaPermissionSchema,
      acceptStatuses: [404], // not a collaborator (or no such user): no write access
    });
    return answer.kind === 'ok' && WRITE_PERMISSIONS.has(answer.data.permission);
  }

  return {
    connection,
    async issue(ref) {
      const c = clientFor(ref);
      const issue = await c.call({
        call: 'get issue',
        method: 'GET',
        path: issuePath(c, ref),
        schema: GiteaIssueSchema,
      });
      return {
        ref,
        url: issue.html_url,
        title: issue.title,
        body: issue.body ?? '',
        labels: (issue.labels ?? []).map((l) => l.name),
        state: issue.state,
        comments: await comments(ref),
        related: await related(ref),
      };
    },
    async labelledIssues(scope, label) {
      const c = clientFor(scope);
      const issues = await c.list({
        call: 'list labelled issues',
        path: `${c.repoPath()}/issues?state=open&type=issues&labels=${enc(label)}`,
        schema: GiteaIssueListSchema,
      });
      return issues
        .filter((i) => !i.pull_request && (i.labels ?? []).some((l) => l.name === label))
        .sort((a, b) => a.number - b.number)
        .map((i) => ({ ...(scope as Extract<TrackerScope, { kind: 'gitea' }>), number: i.number }));
    },
    async findComment(ref, marker) {
      return (await comments(ref)).find((x) => x.body.includes(marker))?.id ?? null;
    },
    async createComment(ref, body) {
      const c = clientFor(ref);
      const created = await c.call({
        call: 'create issue comment',
        method: 'POST',
        path: `${issuePath(c, ref)}/comments`,
        body: { body },
        schema: GiteaCommentSchema,
      });
      return String(created.id);
    },
    async editComment(ref, commentId, body) {
      const c = clientFor(ref);
      await c.call({
        call: 'edit issue comment',
        method: 'PATCH',
        path: `${c.repoPath()}/issues/comments/${enc(commentId)}`,
        body: { body },
        schema: GiteaCommentSchema,
      });
    },
    async commentsAfter(ref, afterCommentId): Promise<IssueReply[]> {
      const after = afterCommentId === null ? -1 : Number(afterCommentId);
      const later = (await comments(ref)).filter((x) => Number(x.id) > after);
      const rights = new Map<string, boolean>(); // asked once per author per call
      const replies: IssueReply[] = [];
      for (const x of later) {
        if (!rights.has(x.author)) rights.set(x.author, x.author !== '' && (await canWrite(ref, x.author)));
        replies.push({ ...x, canWrite: rights.get(x.author) === true });
      }
      return replies;
    },
    async setPhase(ref, phase: TrackerPhase) {
      const c = clientFor(ref);
      const wanted = phaseLabel(phase);
      const id = await labelId(ref, wanted);
      const now = await c.call({
        call: 'add issue label',
        method: 'POST',
        path: `${issuePath(c, ref)}/labels`,
        body: { labels: [id] },
        schema: GiteaLabelListSchema,
      });
      for (const label of now.filter((l) => isOtherSagaLabel(l.name, wanted))) {
        await c.call({
          call: 'remove issue label',
          method: 'DELETE',
          path: `${issuePath(c, ref)}/labels/${label.id}`,
          schema: z.unknown(),
        });
      }
    },
    async whoAmI() {
      requireToken(connection, env);
      const c = new GiteaClient(
        { kind: 'gitea', url: connection.url, owner: '-', repo: '-', tokenEnv: connection.tokenEnv },
        env,
        undefined,
        spend,
      );
      const me = await c.call({ call: 'get user', method: 'GET', path: '/user', schema: GiteaMeSchema });
      return { login: me.login };
    },
  };
}
