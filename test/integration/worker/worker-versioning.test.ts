/**
 * Worker Versioning for compose and Cloud deployments (README: Versioning): `saga worker --deployment NAME
 * --make-current` serves one build of the deployment and makes it current; every saga stays pinned to the
 * build that started it, so after an upgrade running sagas go on on their own build while new ones start on
 * the new build, and no saga is replayed on code that did not write its history.
 */
import { respond } from '../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { cancelSagaQuietly, startGreetingSaga } from '../../harness/greeting-saga';
import { createSagaTestEnv, useEnvInProcess, waitForPending, type SagaTestEnv } from '../../harness/saga-env';
import { killStrayWorkers, spawnWorker, type WorkerProcess } from '../../harness/worker-process';
import { waitFor } from '../../harness/wait';

jest.setTimeout(180_000);

describe('saga worker --deployment', () => {
  let env: SagaTestEnv;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    env = await createSagaTestEnv('deploy');
    useEnvInProcess(env);
  });
  afterAll(async () => {
    for (const name of ['pinned-old', 'pinned-new']) await cancelSagaQuietly(env, name);
    for (const w of workers) await w.stop();
    await killStrayWorkers();
    await env.close();
  });

  /** A worker process serving build `buildId`, made current; resolves once the server says so. */
  async function buildWorker(deployment: string, buildId: string): Promise<WorkerProcess> {
    const worker = await spawnWorker(env, env.hostId, { SAGA_BUILD_ID: buildId }, [
      '--deployment',
      deployment,
      '--make-current',
    ]);
    workers.push(worker);
    await waitFor(`build ${buildId} to be current`, () =>
      worker.output().includes(`Build ${buildId} is the current version of '${deployment}'`),
    );
    return worker;
  }

  /** The build a saga's workflow is pinned to, from the server's own record. */
  async function pinnedBuild(name: string): Promise<{ behavior: unknown; buildId: unknown }> {
    const { raw } = await env.client.workflow.getHandle(sagaWorkflowId(name)).describe();
    const info = raw.workflowExecutionInfo?.versioningInfo;
    return { behavior: info?.behavior, buildId: info?.deploymentVersion?.buildId };
  }

  /** Identities of the workers that completed the saga's workflow tasks. */
  async function workflowTaskWorkers(name: string): Promise<Set<string>> {
    const history = await env.client.workflow.getHandle(sagaWorkflowId(name)).fetchHistory();
    return new Set(
      (history.events ?? []).flatMap((e) => e.workflowTaskCompletedEventAttributes?.identity ?? []),
    );
  }

  test('each saga stays on the build that started it; new sagas start on the current build', async () => {
    const deployment = `saga-${env.hostId}`;
    const PINNED = 1; // temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED
    const b1 = await buildWorker(deployment, 'b1');
    await startGreetingSaga(env, 'pinned-old');
    await waitForPending(env, 'pinned-old', 'confirm-name');
    expect(await pinnedBuild('pinned-old')).toEqual({ behavior: PINNED, buildId: 'b1' });

    // The upgrade: build b2 is deployed and made current while the first saga waits for its answer.
    const b2 = await buildWorker(deployment, 'b2');
    await startGreetingSaga(env, 'pinned-new');
    await waitForPending(env, 'pinned-new', 'confirm-name');
    expect(await pinnedBuild('pinned-new')).toEqual({ behavior: PINNED, buildId: 'b2' });

    // The old saga goes on on b1 (its next workflow tasks are b1's), the new one on b2.
    await respond(env.client, 'pinned-old', {
      interactionId: 'confirm-name',
      choice: 'confirm',
      user: 'test',
    });
    await respond(env.client, 'pinned-new', {
      interactionId: 'confirm-name',
      choice: 'confirm',
      user: 'test',
    });
    await waitForPending(env, 'pinned-old', 'plan-approval-1', 90_000);
    await waitForPending(env, 'pinned-new', 'plan-approval-1', 90_000);
    const byPid = (ids: Set<string>) => [...ids].map((id) => id.split('@')[0]);
    expect(byPid(await workflowTaskWorkers('pinned-old'))).toEqual([String(b1.pid)]);
    expect(byPid(await workflowTaskWorkers('pinned-new'))).toEqual([String(b2.pid)]);
    expect(await pinnedBuild('pinned-old')).toEqual({ behavior: PINNED, buildId: 'b1' });
  });

  test('--make-current without a deployment is refused', async () => {
    const worker = spawnWorker(env, `${env.hostId}-x`, {}, ['--make-current']);
    await expect(worker).rejects.toThrow(
      'saga worker: --make-current needs --deployment NAME (or SAGA_DEPLOYMENT).',
    );
  });
});
