/**
 * The GitHub tracker adapter (src/activities/tracker/github.ts) against the GitHub stand-in, which checks
 * every request and answer against GitHub's OpenAPI description: issues and comments opened by the owner
 * (admin), bob (write) and carol (read) through the REST API with their own tokens, over the Enterprise
 * base (`…/api/v3`); no call the description rejects.
 */
import { createGithubTracker } from '../../../../src/activities/tracker/github';
import { type TrackerFixture, trackerContract, type Actor } from '../../../harness/tracker-contract';
import { githubActors } from '../../../standins/github/actors';
import type { UserRecord } from '../../../standins/github/records';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

const TOKEN_ENV = 'SAGA_TEST_GITHUB_TRACKER_TOKEN';
let gh: GitHubStandIn;
let fixture: TrackerFixture;

async function rest(user: UserRecord, method: string, apiPath: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${gh.apiUrl}/repos/octo/widgets${apiPath}`, {
    method,
    headers: {
      authorization: `Bearer ${user.token}`,
      accept: 'application/vnd.github+json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok && res.status !== 404) throw new Error(`${method} ${apiPath}: ${res.status} ${text}`);
  return res.ok ? (JSON.parse(text) as unknown) : null;
}

beforeAll(async () => {
  gh = await startGitHubStandIn({ owner: 'octo', repo: 'widgets' });
  const users: Record<Actor, UserRecord> = {
    owner: gh.state.owner,
    bob: gh.addUser('bob', 'write'),
    carol: gh.addUser('carol', 'read'),
  };
  const actors = githubActors(gh, users.owner);
  const env = { [TOKEN_ENV]: users.owner.token };
  const num = (ref: unknown) => (ref as { number: number }).number;
  fixture = {
    tracker: createGithubTracker({ kind: 'github', url: gh.apiUrl, tokenEnv: TOKEN_ENV }, env),
    scope: { kind: 'github', owner: 'octo', repo: 'widgets' },
    ownerLogin: 'octo',
    async ensureLabel(name) {
      if (!(await rest(users.owner, 'GET', `/labels/${encodeURIComponent(name)}`)))
        await rest(users.owner, 'POST', '/labels', { name, color: '00aabb' });
    },
    async newIssue(as, input) {
      const number = await actors.issue(users[as], input);
      return { kind: 'github', owner: 'octo', repo: 'widgets', number };
    },
    async comment(as, ref, body) {
      return String(await actors.issueComment(users[as], num(ref), body));
    },
    async labelsOf(ref) {
      const issue = (await rest(users.owner, 'GET', `/issues/${num(ref)}`)) as { labels: { name: string }[] };
      return issue.labels.map((l) => l.name);
    },
    async commentBodies(ref) {
      const list = (await rest(users.owner, 'GET', `/issues/${num(ref)}/comments`)) as { body: string }[];
      return list.map((c) => c.body);
    },
  };
});

afterAll(async () => {
  await gh?.close();
});

describe('the GitHub tracker against the schema-checking stand-in', () => {
  trackerContract(() => fixture);

  it('reads sub-issues as related issues', async () => {
    const parent = await fixture.newIssue('owner', { title: 'Epic', body: '', labels: [] });
    const child = await fixture.newIssue('owner', { title: 'Part one', body: '', labels: [] });
    gh.state.issues.find((i) => i.number === child.number)!.parent = parent.number;
    const issue = await fixture.tracker.issue(parent);
    expect(issue.related).toEqual([{ ref: `#${child.number}`, title: 'Part one' }]);
  });

  it('pages through comments beyond one page', async () => {
    const ref = await fixture.newIssue('owner', { title: 'Chatty', body: '', labels: [] });
    for (let i = 0; i < 105; i++) await fixture.comment('bob', ref, `c${i}`);
    const issue = await fixture.tracker.issue(ref);
    expect(issue.comments).toHaveLength(105);
    expect(issue.comments.at(-1)!.body).toBe('c104');
  });

  // Last: every request the adapter and the actors made was one GitHub's description accepts.
  it("made no request and got no answer that GitHub's description rejects", () => {
    expect(gh.operations).toEqual(expect.arrayContaining(['issues/list-sub-issues', 'issues/remove-label']));
    expect(gh.violations).toEqual([]);
  });
});
