/**
 * The CLI as users and scripts meet it: bin/saga processes against the real server, driving a whole saga
 * (start → answers → approval → report round → accept), the documented JSON, and the exit codes.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import type { SagaStatus } from '../../../src/domain/contract/state';
import { findTemporalBinary } from '../../../src/worker/temporal-binary';
import { runSaga } from '../../harness/cli';
import { createSagaTestEnv, waitForPending, waitForStatus, type SagaTestEnv } from '../../harness/saga-env';

jest.setTimeout(240_000);

describe('saga CLI end to end', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('cli');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  const status = async (name: string): Promise<SagaStatus> => {
    const r = await runSaga(['status', name, '--json'], env.cliEnv);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as SagaStatus;
  };
  // Waiting uses the in-process client (spawning a CLI per poll is slow); actions go through bin/saga.
  const waitPending = (name: string, id: string) => waitForPending(env, name, id, 120_000);

  test('a whole saga driven through bin/saga, with a report round then accept', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const start = await runSaga(
      [
        'start',
        '--repo',
        repo,
        '--plan',
        GREETING_PLAN_FILE,
        '--name',
        'cli-e2e',
        '--',
        '--subagents --parallel=2 Add greeting',
      ],
      env.cliEnv,
    );
    expect(start.stderr).toBe('');
    expect(start.code).toBe(0);
    expect(start.stdout).toContain("Started saga 'cli-e2e'");

    await waitPending('cli-e2e', 'confirm-name');
    const first = await status('cli-e2e');
    for (const key of [
      'name',
      'workflowId',
      'phase',
      'flags',
      'executionMode',
      'pending',
      'milestones',
      'integrationBranch',
      'sagaDir',
      'uiUrl',
    ]) {
      expect(first).toHaveProperty(key);
    }
    expect(first.workflowId).toBe('saga-cli-e2e');
    expect(first.flags.parallel_lanes).toBe(2);
    expect(first.pending[0]).toMatchObject({
      id: 'confirm-name',
      kind: 'confirm-name',
      options: ['confirm', 'cancel'],
      recommended: 0,
    });

    // Bad answers are refused with exit 1 and change nothing.
    const wrong = await runSaga(['respond', 'cli-e2e', 'confirm-name', 'maybe'], env.cliEnv);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("'maybe' is not an option");
    const unknown = await runSaga(['respond', 'cli-e2e', 'no-such-id', 'confirm'], env.cliEnv);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no pending interaction 'no-such-id'");
    expect((await status('cli-e2e')).pending.map((p) => p.id)).toEqual(['confirm-name']);

    expect((await runSaga(['respond', 'cli-e2e', 'confirm-name', '1'], env.cliEnv)).code).toBe(0);
    await waitPending('cli-e2e', 'plan-approval-1');
    expect((await runSaga(['approve', 'cli-e2e'], env.cliEnv)).code).toBe(0);

    const review = await waitPending('cli-e2e', 'acceptance-1');
    expect(review.milestones.flatMap((m) => m.tasks).every((t) => t.status === 'integrated')).toBe(true);
    const reported = await runSaga(
      ['report', 'cli-e2e', '--issue', 'Show the CLI in the README :: check: grep -q bin/greet.js README.md'],
      env.cliEnv,
    );
    expect(reported.code).toBe(0);
    expect(reported.stdout).toContain(
      'Reported 1 issue(s) (acceptance-1); a focused implementation round starts.',
    );
    const again = await waitPending('cli-e2e', 'acceptance-2');
    expect(again.round).toBe(2);
    expect((await runSaga(['accept', 'cli-e2e'], env.cliEnv)).code).toBe(0);

    await waitForStatus(env, 'cli-e2e', (s) => s.phase === 'complete');
    expect((await status('cli-e2e')).phase).toBe('complete');
    await env.client.workflow.getHandle('saga-cli-e2e').result();
    // An answer to a saga that has ended names that, not "no such saga".
    const late = await runSaga(['respond', 'cli-e2e', 'acceptance-2', 'accept'], env.cliEnv);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("Saga 'cli-e2e' is not running any more (COMPLETED)");

    const list = await runSaga(['list', '--json'], env.cliEnv);
    expect(JSON.parse(list.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'cli-e2e', phase: 'complete' })]),
    );

    // The custom search attributes make it findable with Temporal's own CLI.
    const found = execFileSync(
      findTemporalBinary(),
      ['workflow', 'list', '--address', env.address, '--query', 'SagaName="cli-e2e"', '--output', 'json'],
      { encoding: 'utf8' },
    );
    expect(found).toContain('saga-cli-e2e');
  });

  test('user errors exit 1, a missing server exits 2', async () => {
    const noSaga = await runSaga(['status', 'no-such-saga'], env.cliEnv);
    expect(noSaga.code).toBe(1);
    expect(noSaga.stderr).toContain("No saga named 'no-such-saga'");
    const noSagaRespond = await runSaga(['respond', 'no-such-saga', 'confirm-name', 'confirm'], env.cliEnv);
    expect(noSagaRespond.code).toBe(1);
    expect(noSagaRespond.stderr).toContain("No saga named 'no-such-saga'");

    const badFlag = await runSaga(
      ['start', '--repo', env.tmp('x'), '--', '--frobnicate Ship it'],
      env.cliEnv,
    );
    expect(badFlag.code).toBe(1);

    const repo = createSampleRepo(path.join(env.tmp('repo'), 'flags'));
    const unknownFlag = await runSaga(['start', '--repo', repo, '--', '--frobnicate Ship it'], env.cliEnv);
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toContain("Unknown flag '--frobnicate'");

    const noServer = await runSaga(['list'], { ...env.cliEnv, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toContain('saga dev');

    const badCommand = await runSaga(['frobnicate'], env.cliEnv);
    expect(badCommand.code).toBe(1);
  });
});
