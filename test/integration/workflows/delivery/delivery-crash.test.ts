/**
 * Exactly one pull request through a crash: the worker process is SIGKILLed right after it pushed the
 * milestone's branch and before the PR was created (the create request is held by a proxy in front of the
 * REAL Gitea and never reaches it); a new worker and `saga continue` finish the step, and the forge holds
 * one PR for the branch, not two.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { deliveryBranch, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga } from '../../../harness/cli';
import { startForgeProxy, type ForgeProxy } from '../../../harness/forge-proxy';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { writeOneTaskPlan } from '../../../harness/one-task-plan';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { killStrayWorkers, spawnWorker } from '../../../harness/worker-process';

jest.setTimeout(300_000);

const TOKEN_ENV = 'SAGA_TEST_CRASH_TOKEN';
const NAME = 'deliver-crash';
let gitea: TestGitea;
let proxy: ForgeProxy;
let env: SagaTestEnv;

beforeAll(async () => {
  gitea = await startGitea();
  proxy = await startForgeProxy(gitea.url);
  env = await createSagaTestEnv('deliver-crash');
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .terminate()
    .catch(() => undefined);
  await killStrayWorkers();
  await env?.close();
  await proxy?.close();
  await gitea?.stop();
});

/** The forge's PRs whose head is `head`, open or closed. */
async function prsFor(head: string): Promise<unknown[]> {
  const all = (await gitea.api('alice', 'GET', '/repos/alice/demo/pulls?state=all&limit=50')) as {
    head: { ref: string };
  }[];
  return all.filter((p) => p.head.ref === head);
}

test('a worker killed between the push and the PR create: after saga continue, one PR', async () => {
  const dir = env.tmp('repo');
  const repo = createSampleRepo(path.join(dir, 'greeting'));
  const git = (args: string[], extra: Record<string, string> = {}) =>
    execFileSync('git', args, { cwd: repo, env: { PATH: process.env.PATH, HOME: dir, ...extra } });
  // Straight to Gitea (a synchronous git through the proxy would block the proxy's own event loop); the
  // saga's remote then goes through the proxy, as the forge's url does: the token goes to that host only.
  git(['push', '-q', '--force', gitea.repo.cloneUrl, 'main'], gitea.gitEnv('alice'));
  git(['remote', 'add', 'origin', `${proxy.url}/alice/demo.git`]);
  const config = path.join(env.tmp('config'), 'saga.config.yaml');
  writeFileSync(
    config,
    `default_agent: demo\ndelivery: pr\nforge:\n  kind: gitea\n  url: ${proxy.url}\n  repo: alice/demo\n  token_env: ${TOKEN_ENV}\n`,
  );
  const workerEnv = { [TOKEN_ENV]: gitea.users.alice.token };
  const first = await spawnWorker(env, env.hostId, workerEnv);

  const created = proxy.holdNext('POST', /^\/api\/v1\/repos\/alice\/demo\/pulls$/);
  const plan = writeOneTaskPlan(dir, NAME);
  const start = await runSaga(
    ['start', '--repo', repo, '--plan', plan, '--config', config, '--name', NAME, '--', 'Add greeting'],
    env.cliEnv,
  );
  expect(start.code).toBe(0);
  await waitForPending(env, NAME, 'confirm-name', 120_000);
  expect((await runSaga(['respond', NAME, 'confirm-name', 'confirm'], env.cliEnv)).code).toBe(0);
  await waitForPending(env, NAME, 'plan-approval-1', 120_000);
  expect((await runSaga(['approve', NAME], env.cliEnv)).code).toBe(0);

  // The branch is on the forge, the PR create is in flight: the worker dies now.
  await created;
  await first.stop('SIGKILL');
  const head = deliveryBranch(NAME, 1);
  expect(
    await gitea.api('alice', 'GET', `/repos/alice/demo/branches/${encodeURIComponent(head)}`),
  ).toMatchObject({
    name: head,
  });
  expect(await prsFor(head)).toHaveLength(0);

  await spawnWorker(env, env.hostId, workerEnv);
  const cont = await runSaga(['continue', NAME, '--detach'], env.cliEnv);
  expect(cont.code).toBe(0);
  const status = await waitForStatus(env, NAME, (s) => (s.pullRequests ?? []).length === 1, 240_000);
  expect(status.pullRequests![0]).toMatchObject({ head, base: 'main', state: 'open' });
  expect(await prsFor(head)).toHaveLength(1);
});
