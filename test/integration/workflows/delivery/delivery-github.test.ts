/**
 * Delivery to GitHub (Enterprise-style: `url: http://HOST/api/v3`, git on the same host), the same scenario
 * as delivery-gitea.test.ts against the GitHub stand-in (test/standins/github/), which checks every REST and
 * GraphQL request and answer against GitHub's published OpenAPI description and GraphQL schema, serves git
 * over smart HTTP from a real bare repository and merges there. Through bin/saga with the demo agent: two
 * stacked draft PRs; a failing commit status becomes a fix task whose commit is pushed (and merged up the
 * stack); success turns the PRs green; a review comment by a writer becomes a fix, a push and a reply, one by
 * a reader changes nothing; `saga accept --merge` merges both in order through the merge API, with branch
 * protection requiring the CI check; no token in the repository's config or history, no violation.
 */
import { githubForge } from '../../../../src/activities/forge/github';
import { pushEnv } from '../../../../src/activities/forge/push';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runDeliveryScenario } from '../../../harness/delivery-scenario';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';
import { type GitHubActors, githubActors } from '../../../standins/github/actors';
import type { UserRecord } from '../../../standins/github/records';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

jest.setTimeout(600_000);

const TOKEN_ENV = 'SAGA_TEST_DELIVERY_GH_TOKEN';
const NAME = 'deliver-gh'; // not delivery-gitea.test.ts's: the suites share one server
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
  // Branch protection: nothing merges into main without a passing ci/test.
  gh.state.requiredContexts = ['ci/test'];
  // The worker reads the token from its environment at the moment of each forge call.
  process.env[TOKEN_ENV] = gh.state.owner.token;
  env = await createSagaTestEnv('deliver-gh');
  await env.startWorkers();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .cancel()
    .catch(() => undefined);
  await env?.close();
  await gh?.close();
  delete process.env[TOKEN_ENV];
});

test('GitHub: two stacked draft PRs, a CI fix, a review fix with its reply, then merge in order', async () => {
  const { git, m1, m2 } = await runDeliveryScenario(env, NAME, {
    config: [
      'kind: github',
      `url: ${gh.apiUrl}`,
      'repo: alice/demo',
      'remote: origin',
      `token_env: ${TOKEN_ENV}`,
    ],
    remoteUrl: gh.gitUrl,
    ownerGitEnv: pushEnv(gh.state.owner.token) as Record<string, string>,
    adapter: githubForge(
      { kind: 'github', url: gh.apiUrl, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
      process.env,
    ),
    setStatus: (sha, state, description, targetUrl) =>
      actors.setStatus(sha, state, 'ci/test', description, targetUrl),
    reviewComment: (who, at) => actors.reviewComment(who === 'writer' ? bob : carol, at),
    readerLogin: 'carol',
    token: gh.state.owner.token,
  });
  // GitHub's own drafts, and real merge commits on main: m1's first, m2's (retargeted onto main) on top.
  const merges = git(['log', '--merges', '--format=%s', 'origin/main']).split('\n');
  expect(merges.slice(0, 2)).toEqual([
    `Merge pull request #${m2.number} from alice/${m2.head}`,
    `Merge pull request #${m1.number} from alice/${m1.head}`,
  ]);
  expect(gh.state.pulls.map((p) => p.base)).toEqual(['main', 'main']);
  // Every call was GitHub's: none its description refuses.
  expect(gh.operations).toEqual(expect.arrayContaining(['git git-receive-pack', 'pulls/merge', 'graphql']));
  expect(gh.violations).toEqual([]);
});
