/**
 * Intake from an issue on GitHub (Enterprise-style `url: http://HOST/api/v3`), the scenario of
 * test/harness/intake-scenario.ts against the GitHub stand-in (test/standins/github/), which checks every
 * request and answer against GitHub's OpenAPI description and GraphQL schema and closes the issues a merged
 * PR's body names with a closing keyword, as GitHub does.
 */
import { pushEnv } from '../../../src/activities/forge/push';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { runIntakeScenario } from '../../harness/intake-scenario';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { type GitHubActors, githubActors } from '../../standins/github/actors';
import type { UserRecord } from '../../standins/github/records';
import { type GitHubStandIn, startGitHubStandIn } from '../../standins/github/server';

jest.setTimeout(900_000);

const TOKEN_ENV = 'SAGA_TEST_INTAKE_GH_TOKEN';
let gh: GitHubStandIn;
let actors: GitHubActors;
let bob: UserRecord;
let carol: UserRecord;
let env: SagaTestEnv;

beforeAll(async () => {
  gh = await startGitHubStandIn({ owner: 'alice', repo: 'demo' });
  bob = gh.addUser('bob', 'write');
  carol = gh.addUser('carol', 'read');
  actors = githubActors(gh, gh.addUser('ci-runner', 'write', 'Bot'));
  process.env[TOKEN_ENV] = gh.state.owner.token;
  env = await createSagaTestEnv('intake-gh');
  env.cliEnv[TOKEN_ENV] = gh.state.owner.token;
  await env.startWorkers();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId('github-alice-demo-1'))
    .cancel()
    .catch(() => undefined);
  await env?.close();
  await gh?.close();
  delete process.env[TOKEN_ENV];
});

test('GitHub: a labelled issue watched, asked and answered on the issue, delivered, closed by the merge', async () => {
  const issueOf = (n: number) => gh.state.issues.find((i) => i.number === n)!;
  await runIntakeScenario(
    env,
    {
      kind: 'github',
      forgeConfig: ['kind: github', `url: ${gh.apiUrl}`, 'repo: alice/demo', `token_env: ${TOKEN_ENV}`],
      remoteUrl: gh.gitUrl,
      ownerGitEnv: pushEnv(gh.state.owner.token) as Record<string, string>,
      async createIssue(title, body, labels) {
        // The labels exist first: GitHub sets only a repository's own labels on a new issue.
        for (const name of labels) {
          const made = await fetch(`${gh.apiUrl}/repos/alice/demo/labels`, {
            method: 'POST',
            headers: { authorization: `Bearer ${gh.state.owner.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name, color: '00aabb' }),
          });
          expect(made.status).toBe(201);
        }
        return actors.issue(gh.state.owner, { title, body, labels });
      },
      async comment(who, issue, body) {
        await actors.issueComment(who === 'writer' ? bob : carol, issue, body);
      },
      async comments(issue) {
        return gh.state.issueComments
          .filter((c) => c.issue === issue)
          .map((c) => ({ author: c.author.login, body: c.body }));
      },
      labels: async (issue) => issueOf(issue).labels,
      issueState: async (issue) => issueOf(issue).state,
      setStatus: (sha, state, description) => actors.setStatus(sha, state, 'ci/test', description),
      writerLogin: 'bob',
      readerLogin: 'carol',
      token: gh.state.owner.token,
    },
    TOKEN_ENV,
  );
  expect(gh.violations).toEqual([]);
});
