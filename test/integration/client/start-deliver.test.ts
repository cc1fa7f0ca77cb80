/**
 * `saga start --deliver` through bin/saga against the run's real Temporal server: refused at once when the
 * config names no forge (nothing started), recorded in the saga's input when it does; a repository's own
 * saga.config.yaml cannot switch delivery on or name the forge unless trusted; `--help` and completion list
 * the option; an empty goal (picking up a saga) refuses it.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import type { SagaInput } from '../../../src/domain/saga/saga-input';
import { runSaga } from '../../harness/cli';
import { git } from '../../harness/fleet-saga';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';

jest.setTimeout(120_000);

const FORGE =
  'forge:\n  kind: gitea\n  url: http://127.0.0.1:3000\n  repo: alice/demo\n  token_env: SAGA_TEST_FORGE_TOKEN\n';

let env: SagaTestEnv;
beforeAll(async () => {
  env = await createSagaTestEnv('start-deliver');
});
afterAll(async () => env?.close());

/** The sample repository, and a config file of the user's (outside it) with `config`. */
function setUp(label: string, config: string): { repo: string; configFile: string } {
  const dir = env.tmp(label);
  const repo = createSampleRepo(path.join(dir, 'greeting'));
  const configFile = path.join(dir, 'user.yaml');
  writeFileSync(configFile, `default_agent: demo\n${config}`);
  return { repo, configFile };
}

const start = (repo: string, configFile: string, name: string, ...extra: string[]) =>
  runSaga(
    [
      'start',
      '--repo',
      repo,
      '--config',
      configFile,
      '--plan',
      GREETING_PLAN_FILE,
      '--name',
      name,
      '--skip-agent-check',
      ...extra,
      '--',
      'Add greeting',
    ],
    env.cliEnv,
  );

const sagaExists = async (name: string) => (await runSaga(['status', name, '--json'], env.cliEnv)).code === 0;

/** The input the saga workflow was started with, as its history holds it. */
async function startInput(name: string): Promise<SagaInput> {
  const history = await env.client.workflow.getHandle(sagaWorkflowId(name)).fetchHistory();
  const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  return defaultPayloadConverter.fromPayload<SagaInput>(payload);
}

test('--deliver without a forge in the config: refused at once, nothing started', async () => {
  const { repo, configFile } = setUp('noforge', 'attempts: 2\n');
  const r = await start(repo, configFile, 'noforge', '--deliver');
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(
    'saga start: --deliver needs a `forge:` in your saga.config.yaml (kind, repo, token_env; url for Gitea or GitHub Enterprise).',
  );
  expect(r.stdout).not.toContain('Started saga');
  expect(existsSync(path.join(env.sagaHome, 'noforge'))).toBe(false);
  expect(await sagaExists('noforge')).toBe(false);
});

test('--deliver with a forge: the saga starts with delivery asked for; without it, as the config says', async () => {
  const { repo, configFile } = setUp('withforge', FORGE);
  const r = await start(repo, configFile, 'withforge', '--deliver');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("Started saga 'withforge'");
  expect(await startInput('withforge')).toMatchObject({ name: 'withforge', deliver: true });

  const plain = await start(repo, configFile, 'plainstart');
  expect(plain.code).toBe(0);
  expect((await startInput('plainstart')).deliver).toBeUndefined();
  for (const name of ['withforge', 'plainstart'])
    await env.client.workflow.getHandle(sagaWorkflowId(name)).terminate('test done');
});

test("a repository's own config may not turn delivery on or name the forge unless trusted", async () => {
  const { repo, configFile } = setUp('repoforge', '');
  writeFileSync(path.join(repo, 'saga.config.yaml'), `delivery: pr\nauto_merge: true\n${FORGE}`);
  git(repo, 'add', 'saga.config.yaml');
  git(repo, 'commit', '-qm', 'the repository names a forge');
  const r = await start(repo, configFile, 'repoforge');
  expect(r.code).toBe(1);
  for (const line of [
    'saga.config.yaml: delivery: set by the repository (it would push and open pull requests with your forge token)',
    'saga.config.yaml: forge.url: set by the repository (it could send your forge token to another host)',
    'saga.config.yaml: forge.token_env: set by the repository',
    'saga.config.yaml: auto_merge: set by the repository (it could merge pull requests without asking you)',
  ])
    expect(r.stderr).toContain(line);
  expect(r.stderr).toContain('--trust-repo-config');
  expect(await sagaExists('repoforge')).toBe(false);

  const trusted = await start(repo, configFile, 'repoforge', '--trust-repo-config');
  expect(trusted.code).toBe(0);
  expect(trusted.stderr).toContain('--trust-repo-config: ');
  expect(trusted.stderr).toContain('forge.url: "http://127.0.0.1:3000" (set by the repository)');
  await env.client.workflow.getHandle(sagaWorkflowId('repoforge')).terminate('test done');
});

test('saga start --help and the completion list --deliver; picking up a saga refuses it', async () => {
  const help = await runSaga(['start', '--help'], env.cliEnv);
  expect(help.stdout).toMatch(/--deliver\s+deliver as pull requests on the config's forge/);
  const completion = await runSaga(['completion', 'bash'], env.cliEnv);
  expect(completion.stdout).toContain('--deliver');

  const { repo } = setUp('pickup', '');
  const pickup = await runSaga(['start', '--repo', repo, '--deliver'], env.cliEnv);
  expect(pickup.code).toBe(1);
  expect(pickup.stderr).toContain("--deliver: an empty goal picks up the repository's unfinished saga");
});
