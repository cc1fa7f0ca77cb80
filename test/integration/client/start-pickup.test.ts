/**
 * `saga start --repo R` with an empty goal (docs/PROCEDURE.md §7.1), through bin/saga against the
 * real server: the one unfinished saga of R is continued, saying so; several are asked about at a terminal
 * and listed in a script; none is the missing-goal error; options that only shape a new saga are refused.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { runSaga, SAGA_BIN } from '../../harness/cli';
import { runSagaInPty } from '../../harness/pty';
import {
  createInProcessSagaEnv,
  createSagaTestEnv,
  useEnvInProcess,
  waitForPending,
  type InProcessSagaEnv,
  type SagaTestEnv,
} from '../../harness/saga-env';
import { waitFor } from '../../harness/wait';

jest.setTimeout(150_000);

// eslint-disable-next-line no-control-regex -- ESC starts the sequences removed here
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');

describe('saga start with an empty goal', () => {
  let env: InProcessSagaEnv;
  const suffix = Date.now().toString(36);
  const started: string[] = [];
  let oneRepo: string;
  let twoRepo: string;
  let noneRepo: string;

  const startOn = async (repo: string, name: string) => {
    const input = await prepareSaga({ repo, argumentsText: 'Add greeting', plan: GREETING_PLAN_FILE, name });
    await startSaga(env.client, input);
    started.push(name);
    await waitForPending(env, name, 'confirm-name');
    return input.repo;
  };

  beforeAll(async () => {
    env = await createInProcessSagaEnv('start-pickup');
    oneRepo = await startOn(createSampleRepo(path.join(env.tmp('one'), 'greeting')), `one-${suffix}`);
    const two = createSampleRepo(path.join(env.tmp('two'), 'greeting'));
    await startOn(two, `two-a-${suffix}`);
    twoRepo = await startOn(two, `two-b-${suffix}`);
    noneRepo = createSampleRepo(path.join(env.tmp('none'), 'greeting'));
  });
  afterAll(async () => {
    for (const name of started)
      await env.client.workflow
        .getHandle(sagaWorkflowId(name))
        .terminate('test over')
        .catch(() => undefined);
    await env.close();
  });

  test("the repository's one unfinished saga is continued, saying so (flags given change nothing)", async () => {
    const result = await runSaga(['start', '--repo', oneRepo, '--', '--autonomous'], env.cliEnv);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `No goal given: picking up the unfinished saga 'one-${suffix}' of ${oneRepo}, as 'saga continue one-${suffix}' would.`,
    );
    expect(result.stdout).toContain('--autonomous given here changes nothing');
    // What `saga continue` prints: the saga's status, waiting at its name confirmation.
    expect(result.stdout).toContain(`Saga one-${suffix} — planning`);
    expect(result.stdout).toContain('[confirm-name]');
    // Nothing new started.
    expect(result.stdout).not.toContain('Started saga');
  });

  test('none: the missing-goal error, naming the repository', async () => {
    const result = await runSaga(['start', '--repo', noneRepo], env.cliEnv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Say what the saga should deliver: saga start --repo PATH -- "Ship dark mode".',
    );
    expect(result.stderr).toContain('has no unfinished saga to pick up');
  });

  test('options that shape a new saga are refused with an empty goal', async () => {
    const result = await runSaga(['start', '--repo', oneRepo, '--name', 'other'], env.cliEnv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--name: an empty goal picks up the repository's unfinished saga");
    expect(result.stdout).toBe('');
  });

  test('several, in a script: listed, and the user must say which', async () => {
    const result = await runSaga(['start', '--repo', twoRepo], env.cliEnv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `Several unfinished sagas of ${twoRepo}; say which one: saga continue NAME`,
    );
    expect(result.stderr).toMatch(new RegExp(`two-a-${suffix} +phase planning`));
    expect(result.stderr).toMatch(new RegExp(`two-b-${suffix} +phase planning`));
    expect(result.stderr).not.toContain(`one-${suffix}`);
  });

  test('several, at a terminal: asked which, and the chosen one is continued', async () => {
    let listing = '';
    const result = await runSagaInPty(['start', '--repo', twoRepo], env.cliEnv, (raw) => {
      const output = plain(raw);
      if (!/Which saga\? \(1-2 or a name\): $/.test(output)) return null;
      listing = output;
      return '2\r';
    });
    expect(listing).toContain(`Several unfinished sagas of ${twoRepo}:`);
    expect(listing).toMatch(new RegExp(`1\\) two-a-${suffix} `));
    expect(listing).toMatch(new RegExp(`2\\) two-b-${suffix} `));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`picking up the unfinished saga 'two-b-${suffix}'`);
    expect(result.stdout).toContain(`Saga two-b-${suffix} — planning`);
  });
});

describe('saga start with an empty goal, no worker running', () => {
  let env: SagaTestEnv;
  const name = `alone-${Date.now().toString(36)}`;
  beforeAll(async () => {
    env = await createSagaTestEnv('start-pickup-alone');
    useEnvInProcess(env);
  });
  afterAll(async () => {
    await env.client.workflow
      .getHandle(sagaWorkflowId(name))
      .terminate('test over')
      .catch(() => undefined);
    await env.close();
  });

  test('runs the worker in its own process and follows the saga, as saga continue does', async () => {
    const repo = createSampleRepo(path.join(env.tmp('alone'), 'greeting'));
    const input = await prepareSaga({ repo, argumentsText: 'Add greeting', plan: GREETING_PLAN_FILE, name });
    await startSaga(env.client, input);
    const child = spawn(process.execPath, [SAGA_BIN, 'start', '--repo', repo], {
      env: env.cliEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      // The saga only reaches its first question on the worker this command started.
      await waitFor('the name confirmation in the output', () => output.includes('[confirm-name]'), 60_000);
      expect(output).toContain(`picking up the unfinished saga '${name}'`);
      expect(output).toContain('No worker was polling');
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
