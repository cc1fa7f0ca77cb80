/**
 * `pr: single` on the REAL Gitea: the saga's one pull request is its integration branch on the base, opened
 * when the first milestone is integrated; `saga accept --merge` marks it ready and merges it.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { integrationBranch, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga } from '../../../harness/cli';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { writeOneTaskPlan } from '../../../harness/one-task-plan';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

jest.setTimeout(300_000);

const TOKEN_ENV = 'SAGA_TEST_SINGLE_TOKEN';
const NAME = 'deliver-single';
let gitea: TestGitea;
let env: SagaTestEnv;

beforeAll(async () => {
  gitea = await startGitea();
  process.env[TOKEN_ENV] = gitea.users.alice.token;
  env = await createSagaTestEnv('deliver-single');
  await env.startWorkers();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .terminate()
    .catch(() => undefined);
  await env?.close();
  await gitea?.stop();
  delete process.env[TOKEN_ENV];
});

test('pr: single opens one PR of the integration branch, and merge merges it', async () => {
  const dir = env.tmp('repo');
  const repo = createSampleRepo(path.join(dir, 'greeting'));
  const git = (args: string[], extra: Record<string, string> = {}) =>
    execFileSync('git', args, { cwd: repo, env: { PATH: process.env.PATH, HOME: dir, ...extra } });
  git(['remote', 'add', 'origin', gitea.repo.cloneUrl]);
  git(['push', '-q', '--force', 'origin', 'main'], gitea.gitEnv('alice'));
  const config = path.join(env.tmp('config'), 'saga.config.yaml');
  writeFileSync(
    config,
    `default_agent: demo\ndelivery: pr\npr: single\nforge:\n  kind: gitea\n  url: ${gitea.url}\n  repo: alice/demo\n  token_env: ${TOKEN_ENV}\n`,
  );
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

  const waiting = await waitForStatus(
    env,
    NAME,
    (s) => s.pending.some((p) => p.id === 'acceptance-1'),
    240_000,
  );
  expect(waiting.pullRequests).toEqual([
    expect.objectContaining({ milestone: null, head: integrationBranch(NAME), base: 'main', draft: true }),
  ]);
  const merged = await runSaga(['accept', NAME, '--merge'], env.cliEnv);
  expect(merged.code).toBe(0);
  const done = await waitForStatus(env, NAME, (s) => s.phase === 'complete', 120_000);
  expect(done.pullRequests!.map((p) => p.state)).toEqual(['merged']);
  const pulls = (await gitea.api('alice', 'GET', '/repos/alice/demo/pulls?state=all')) as {
    merged: boolean;
  }[];
  expect(pulls.map((p) => p.merged)).toEqual([true]);
});
