/**
 * Pure translations between Gitea's answers and the forge port's shapes (no I/O; gitea.ts does the calls):
 * pull requests (a draft is a title with Gitea's work-in-progress prefix), commit statuses to checks and a
 * CI state, and review comments grouped into threads the way Gitea shows conversations (same file, same line).
 */
import type { ForgeCheck, PullRequest, ReviewComment } from './port';
import type { GiteaCommitStatus, GiteaPull, GiteaReviewComment, GiteaStatusState } from './gitea-schemas';

/** Gitea's default `WORK_IN_PROGRESS_PREFIXES`; the first is the one the adapter writes. */
export const WIP_PREFIXES = ['WIP:', '[WIP]'] as const;

/** The title without a work-in-progress prefix (and the space after it). */
export function stripWipPrefix(title: string): string {
  for (const prefix of WIP_PREFIXES) {
    if (title.toUpperCase().startsWith(prefix)) return title.slice(prefix.length).trimStart();
  }
  return title;
}

/** The title Gitea is given: a draft gets the `WIP: ` prefix (Gitea 1.27's API has no draft field to set). */
export function giteaTitle(title: string, draft: boolean): string {
  const plain = stripWipPrefix(title);
  return draft ? `${WIP_PREFIXES[0]} ${plain}` : plain;
}

export function toPullRequest(pull: GiteaPull): PullRequest {
  const draft = pull.draft === true;
  return {
    number: pull.number,
    htmlUrl: pull.html_url,
    head: pull.head.ref,
    base: pull.base.ref,
    // The caller's own title: the draft prefix is Gitea's way of saying `draft`, reported as `draft`.
    title: draft ? stripWipPrefix(pull.title) : pull.title,
    body: pull.body ?? '',
    draft,
    state: pull.merged ? 'merged' : pull.state,
    headSha: pull.head.sha,
    // Gitea leaves the count out when it is 0 (`omitempty`).
    reviewCommentCount: pull.review_comments ?? 0,
  };
}

/**
 * The pull request for `head` among `pulls`: an open one first, else the most recently numbered merged one.
 * Only pulls from the repository itself count (a fork's branch of the same name is someone else's).
 */
export function pickPullForHead(pulls: GiteaPull[], head: string): GiteaPull | null {
  const same = pulls.filter(
    (pull) =>
      pull.head.ref === head &&
      (pull.head.repo_id == null || pull.base.repo_id == null || pull.head.repo_id === pull.base.repo_id),
  );
  const open = same.find((pull) => pull.state === 'open');
  if (open) return open;
  const merged = same.filter((pull) => pull.merged).sort((a, b) => b.number - a.number);
  return merged[0] ?? null;
}

/** `error` is a failure; `warning` is neutral (never a failure); `skipped` stays skipped. */
export function checkState(state: GiteaStatusState): ForgeCheck['state'] {
  switch (state) {
    case 'pending':
      return 'pending';
    case 'success':
      return 'success';
    case 'error':
    case 'failure':
      return 'failure';
    case 'warning':
      return 'neutral';
    case 'skipped':
      return 'skipped';
  }
}

export function toCheck(status: GiteaCommitStatus): ForgeCheck {
  return {
    name: status.context ?? '',
    state: checkState(status.status),
    description: status.description ?? '',
    targetUrl: status.target_url ? status.target_url : null,
    // Commit statuses carry no log; the target URL is where it is.
    logExcerpt: null,
  };
}

/** A comment's conversation key: Gitea groups a pull's code comments by file and (signed) line. */
function conversationKey(comment: GiteaReviewComment): string {
  return `${comment.path ?? ''}\u0000${comment.position ?? 0}\u0000${comment.original_position ?? 0}`;
}

/** Users Gitea itself acts as (ghost -1, actions -2) and apps named like GitHub's bots. */
export function isBotUser(user: { id: number; login: string } | null | undefined): boolean {
  if (!user) return true;
  return user.id <= 0 || /\[bot\]$/i.test(user.login);
}

/**
 * The port's review comments: each comment's thread is the id of its conversation's first comment, and a
 * conversation is resolved when any of its comments carries a resolver (Gitea marks the one it was given).
 */
export function toReviewComments(
  comments: GiteaReviewComment[],
  canWrite: (login: string) => boolean,
): ReviewComment[] {
  const sorted = [...comments].sort((a, b) => a.id - b.id);
  const threads = new Map<string, { first: number; resolved: boolean }>();
  for (const comment of sorted) {
    const key = conversationKey(comment);
    const thread = threads.get(key) ?? { first: comment.id, resolved: false };
    thread.resolved ||= comment.resolver != null;
    threads.set(key, thread);
  }
  return sorted.map((comment) => {
    const thread = threads.get(conversationKey(comment))!;
    const login = comment.user?.login ?? '';
    const line = comment.position || comment.original_position || null;
    return {
      id: comment.id,
      threadId: String(thread.first),
      author: login,
      authorCanWrite: login !== '' && canWrite(login),
      isBot: isBotUser(comment.user),
      path: comment.path ? comment.path : null,
      line,
      body: comment.body,
      commitSha: comment.commit_id ?? '',
      resolved: thread.resolved,
    };
  });
}

/** Gitea's collaborator permission names that may push. */
export const WRITE_PERMISSIONS = new Set(['write', 'admin', 'owner']);
