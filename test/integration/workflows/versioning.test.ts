/**
 * Versioning (README): before 1.0 there are no patch branches; a saga crosses an upgrade by its state. A
 * saga run made by other code is refused by the current code's replay, and `saga continue` carries it on in
 * a new run from its state: finished tasks are not redone, and it completes. A state of the previous
 * schema version migrates and the saga finishes from it; a state that cannot be read fails with the reason.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { respond } from '../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { SAGA_STATE_VERSION, type SagaState } from '../../../src/domain/saga/saga-state';
import { SagaName } from '../../../src/domain/contract/search-attributes';
import { carryQuery } from '../../../src/domain/saga/messages';
import { runSaga } from '../../harness/cli';
import { startApprovedSaga } from '../../harness/fleet-saga';
import {
  createSagaTestEnv,
  demoInvocations,
  useEnvInProcess,
  waitForPending,
  type RunningWorkers,
  type SagaTestEnv,
} from '../../harness/saga-env';
import { asVersion1 } from '../../harness/saga-state';
import { WORKFLOW_BUNDLE } from '../../harness/server';

jest.setTimeout(240_000);

describe('a saga crosses an upgrade by its state', () => {
  let env: SagaTestEnv;
  let demoLog: string;
  let oldBundle: string;
  let current: RunningWorkers | null = null;
  const currentWorkers = async () => (current ??= await env.startWorkers());
  const implementerRuns = () =>
    demoInvocations(demoLog)
      .filter((i) => i.role === 'implementer')
      .map((i) => i.taskId)
      .sort();

  beforeAll(async () => {
    env = await createSagaTestEnv('versioning');
    demoLog = path.join(env.tmp('log'), 'demo.jsonl');
    useEnvInProcess(env, demoLog);
    const bundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../fixtures/old-code/workflows'),
      logger: new DefaultLogger('WARN'),
    });
    oldBundle = path.join(env.tmp('bundle'), 'old-workflows.js');
    writeFileSync(oldBundle, bundle.code);
  });
  afterAll(async () => {
    delete process.env.SAGA_DEMO_LOG;
    await env.close();
  });

  /** A greeting saga (three tasks) approved and run to its acceptance question. */
  async function sagaAtAcceptance(name: string) {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const input = await startApprovedSaga(env, {
      repo,
      planFile: GREETING_PLAN_FILE,
      name,
      args: 'Add greeting',
    });
    await waitForPending(env, name, 'acceptance-1', 120_000);
    return input;
  }

  test('a run made by other code is refused by replay and carried on by saga continue', async () => {
    const old = await env.startWorkers({ workflowBundlePath: oldBundle });
    await sagaAtAcceptance('upgrade');
    await old.stop();
    const before = implementerRuns();
    expect(before).toEqual(['1.1', '1.2', '2.1']);

    const handle = env.client.workflow.getHandle(sagaWorkflowId('upgrade'));
    const oldRun = (await handle.describe()).runId;
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE } }, await handle.fetchHistory()),
    ).rejects.toMatchObject({ name: 'DeterminismViolationError' });

    await currentWorkers();
    const cont = await runSaga(['continue', 'upgrade', '--detach'], env.cliEnv);
    expect(cont.code).toBe(0);
    expect(cont.stdout).toContain("Saga 'upgrade': its run was made by code this version cannot replay (");
    expect(cont.stdout).toContain(
      'resumed in a new run from its last state (3 finished task(s) kept, not redone)',
    );
    const replaced = await env.client.workflow.getHandle(sagaWorkflowId('upgrade'), oldRun).describe();
    expect(replaced.status.name).toBe('TERMINATED');

    const status = await waitForPending(env, 'upgrade', 'acceptance-1', 120_000);
    expect(status.runId).not.toBe(oldRun);
    expect(status.milestones.flatMap((m) => m.tasks.map((t) => t.status))).toEqual([
      'integrated',
      'integrated',
      'integrated',
    ]);
    expect(implementerRuns()).toEqual(before); // nothing redone
    await respond(env.client, 'upgrade', { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    expect((await handle.result()).phase).toBe('complete');
  });

  /** Replaces the saga's run by one started from `state` (as `saga continue` does). */
  async function restartFrom(name: string, input: unknown, state: unknown) {
    const handle = env.client.workflow.getHandle(sagaWorkflowId(name));
    await handle.terminate('replaced by a run from an older state');
    await env.client.workflow.start('sagaWorkflow', {
      taskQueue: env.taskQueue,
      workflowId: sagaWorkflowId(name),
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      args: [input, state],
      typedSearchAttributes: [{ key: SagaName, value: name }],
    });
    return handle;
  }

  test('a state of the previous schema version migrates, and the saga finishes from it', async () => {
    await currentWorkers();
    const input = await sagaAtAcceptance('migrate');
    const state = (await env.client.workflow.getHandle(sagaWorkflowId('migrate')).query(carryQuery))!;
    expect(state.version).toBe(SAGA_STATE_VERSION);
    const handle = await restartFrom('migrate', input, asVersion1(state));

    await waitForPending(env, 'migrate', 'acceptance-1', 120_000);
    const migrated = (await handle.query(carryQuery)) as SagaState;
    expect(migrated.version).toBe(SAGA_STATE_VERSION);
    expect(migrated.ctx.settings.passEnv).toEqual([]);
    expect(migrated.ctx.settings.heartbeatTimeoutMs).toBe(30_000);
    // Integrated milestones are carried as their records (their task states are in the saga directory).
    expect(migrated.milestones.map((m) => [m.status, m.tasks.length, m.record?.integrated])).toEqual([
      ['integrated', 0, 2],
      ['integrated', 0, 1],
    ]);
    await respond(env.client, 'migrate', { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    expect((await handle.result()).phase).toBe('complete');
  });

  test('a state that cannot be read fails the run, naming what is wrong', async () => {
    await currentWorkers();
    const input = await sagaAtAcceptance('broken-state');
    const state = (await env.client.workflow.getHandle(sagaWorkflowId('broken-state')).query(carryQuery))!;
    const handle = await restartFrom('broken-state', input, { ...state, lanes: 'many' });
    await expect(handle.result()).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/^saga state \(version 2\): lanes: Expected number/) },
    });
  });
});
