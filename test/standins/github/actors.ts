/**
 * The people and systems around a pull request on the GitHub stand-in, acting as they would on GitHub:
 * through its REST API with their own tokens (so each call is checked against GitHub's description like
 * the saga's): a CI system setting commit statuses, reviewers commenting on a line.
 */
import type { UserRecord } from './records';
import type { GitHubStandIn } from './server';

export interface GitHubActors {
  /** A commit status as a CI system sets one (`POST /repos/{owner}/{repo}/statuses/{sha}`). */
  setStatus(
    sha: string,
    state: 'error' | 'failure' | 'pending' | 'success',
    context: string,
    description?: string,
    targetUrl?: string,
  ): Promise<void>;
  /** A review comment on one line of a PR's head, by `user`. */
  reviewComment(
    user: UserRecord,
    input: { pr: number; commitId: string; path: string; line: number; body: string },
  ): Promise<number>;
  /** An issue opened by `user` (labels kept only when `user` may push, as on GitHub); its number. */
  issue(user: UserRecord, input: { title: string; body: string; labels?: string[] }): Promise<number>;
  /** A comment on issue `number` by `user`; its id. */
  issueComment(user: UserRecord, number: number, body: string): Promise<number>;
}

async function call(gh: GitHubStandIn, user: UserRecord, apiPath: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${gh.apiUrl}${apiPath}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${user.token}`,
      accept: 'application/vnd.github+json',
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${apiPath} as ${user.login} answered ${res.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

/** `ci` sets the statuses (a user with write access, as a CI app's token has). */
export function githubActors(gh: GitHubStandIn, ci: UserRecord): GitHubActors {
  const repo = `/repos/${gh.state.owner.login}/${gh.state.repo.name}`;
  return {
    async setStatus(sha, state, context, description, targetUrl) {
      await call(gh, ci, `${repo}/statuses/${sha}`, {
        state,
        context,
        ...(description ? { description } : {}),
        ...(targetUrl ? { target_url: targetUrl } : {}),
      });
    },
    async reviewComment(user, input) {
      const answer = (await call(gh, user, `${repo}/pulls/${input.pr}/comments`, {
        body: input.body,
        commit_id: input.commitId,
        path: input.path,
        line: input.line,
        side: 'RIGHT',
      })) as { id: number };
      return answer.id;
    },
    async issue(user, input) {
      const answer = (await call(gh, user, `${repo}/issues`, input)) as { number: number };
      return answer.number;
    },
    async issueComment(user, number, body) {
      const answer = (await call(gh, user, `${repo}/issues/${number}/comments`, { body })) as { id: number };
      return answer.id;
    },
  };
}
