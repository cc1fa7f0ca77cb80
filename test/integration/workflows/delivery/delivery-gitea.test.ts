/**
 * Delivery to a REAL Gitea (test/harness/gitea.ts), driven through bin/saga with the demo agent: the
 * scenario of test/harness/delivery-scenario.ts (two stacked draft PRs with the exit-criteria checklist, a
 * CI failure fixed and pushed up the stack, a writer's review comment fixed with a reply, a reader's left
 * alone, `saga accept --merge` merging both in order, no token in the repository). Its delivery watch's
 * history is the one kept for release 0.3.0 (RECORD_HISTORIES=1).
 */
import { giteaForge } from '../../../../src/activities/forge/gitea';
import { phaseWorkflowId, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runDeliveryScenario } from '../../../harness/delivery-scenario';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { recordHistory } from '../../../harness/histories';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';

jest.setTimeout(600_000);

const TOKEN_ENV = 'SAGA_TEST_DELIVERY_TOKEN';
const NAME = 'deliver';
let gitea: TestGitea;
let env: SagaTestEnv;

beforeAll(async () => {
  gitea = await startGitea();
  // The worker reads the token from its environment at the moment of each forge call.
  process.env[TOKEN_ENV] = gitea.users.alice.token;
  env = await createSagaTestEnv('deliver');
  await env.startWorkers();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .cancel()
    .catch(() => undefined);
  await env?.close();
  await gitea?.stop();
  delete process.env[TOKEN_ENV];
});

test('two stacked draft PRs, a CI fix, a review fix with its reply, then merge in order', async () => {
  await runDeliveryScenario(env, NAME, {
    config: [
      'kind: gitea',
      `url: ${gitea.url}`,
      'repo: alice/demo',
      'remote: origin',
      `token_env: ${TOKEN_ENV}`,
    ],
    remoteUrl: gitea.repo.cloneUrl,
    ownerGitEnv: gitea.gitEnv('alice'),
    adapter: giteaForge(
      { kind: 'gitea', url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
      process.env,
    ),
    setStatus: (sha, state, description, targetUrl) =>
      gitea.setStatus(sha, state, 'ci/test', description, targetUrl),
    // bob has write access, carol read access only.
    reviewComment: (who, { pr, path, line, body }) =>
      gitea.reviewComment(who === 'writer' ? 'bob' : 'carol', { pr, path, line, body }),
    readerLogin: 'carol',
    token: gitea.users.alice.token,
  });
  const id = phaseWorkflowId(NAME, 'delivery');
  recordHistory('deliveryWorkflow', await env.client.workflow.getHandle(id).fetchHistory());
});
