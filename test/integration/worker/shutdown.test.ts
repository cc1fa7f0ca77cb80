/**
 * Graceful shutdown of `saga worker` (README, Scaling out): SIGTERM stops polling, gives running activities the
 * grace period, then cancels them; the agent activity kills its process tree and reports the
 * cancellation, and the worker exits 0 with no agent process left behind. A saga that only waits for an
 * answer holds nothing up: its PROGRESS.md projector ends at once and starts again on the next worker.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { respond } from '../../../src/client/saga-client';
import { createSampleRepo } from '../../../src/demo/sample-repo';
import { sagaWorkflowId, taskWorkflowId } from '../../../src/domain/contract/naming';
import { writeOneTaskPlan } from '../../harness/one-task-plan';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../harness/saga-env';
import { ensureBuilt, killStrayWorkers, spawnWorker } from '../../harness/worker-process';
import { processesWithEnv } from '../../harness/processes';
import { waitFor } from '../../harness/wait';

describe('saga worker shutdown', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('shutdown');
    await ensureBuilt();
  });
  afterAll(async () => {
    await killStrayWorkers();
    await env.close();
  });

  test('SIGTERM cancels the running agent activity, kills its process tree and drains', async () => {
    const dir = env.tmp('repo');
    const demoLog = path.join(dir, 'demo.log');
    const repo = createSampleRepo(path.join(dir, 'greeting'), {
      script: { tasks: { '1.1': { attempts: [{ sleep_ms: 120_000 }] } } },
    });
    // A short grace period keeps the test quick; the agent cannot finish within it either way.
    const worker = await spawnWorker(env, env.hostId, {
      SAGA_DEMO_LOG: demoLog,
      SAGA_SHUTDOWN_GRACE_MS: '2000',
    });

    const name = `shutdown-${env.hostId.slice(-6)}`;
    await startWaitingSaga(env, repo, dir, name);
    await respond(env.client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });

    const agentPid = await waitFor(
      'the implementer agent to start',
      () => {
        const runs = existsSync(demoLog) ? readFileSync(demoLog, 'utf8').split('\n').filter(Boolean) : [];
        const run = runs
          .map((l) => JSON.parse(l) as { role: string; pid: number })
          .find((r) => r.role === 'implementer');
        return run?.pid;
      },
      30_000,
    );
    expect(agentPid).toBeGreaterThan(0);
    // Confined, that pid is its namespace's: the host finds the agent by its environment.
    const agentsRunning = () => processesWithEnv(`SAGA_DEMO_LOG=${demoLog}`);
    expect(agentsRunning().length).toBeGreaterThan(0);

    const stopped = Date.now();
    const exit = await worker.stop('SIGTERM', 40_000);
    expect(exit).toEqual({ code: 0, signal: null });
    // Grace period plus the agent's kill grace, well before the worker's force-shutdown backstop.
    expect(Date.now() - stopped).toBeLessThan(20_000);
    expect(agentsRunning()).toEqual([]);
    expect(worker.output()).not.toMatch(/GracefulShutdownPeriodExpired|unexpected error/i);

    // The attempt ended as a cancellation caused by the shutdown (not a timeout the server had to notice),
    // so the activity is ready for another worker of this host.
    const task = await env.client.workflow.getHandle(taskWorkflowId(name, 1, 1)).describe();
    const [agent] = task.raw.pendingActivities ?? [];
    expect(agent?.activityType?.name).toBe('runTaskAttempt');
    expect(agent?.lastFailure?.message).toMatch(/shutting down/i);

    await env.client.workflow.getHandle(sagaWorkflowId(name)).terminate('test done');
  }, 90_000);
  test('Ctrl-C with a saga waiting for an answer: its projector ends at once, quietly, and resumes on the next worker', async () => {
    const dir = env.tmp('waiting');
    const repo = createSampleRepo(path.join(dir, 'greeting'));
    // A long grace period: a projector that held the shutdown would show as a wait of 60 s. Half of it is the
    // limit: a worker stopping on 2 busy cores took 10 s (a CI run), which is not the projector.
    const worker = await spawnWorker(env, env.hostId, { SAGA_SHUTDOWN_GRACE_MS: '60000' });
    const name = `waiting-${env.hostId.slice(-6)}`;
    await startWaitingSaga(env, repo, dir, name);
    const projectorOf = async () => {
      const desc = await env.client.workflow.getHandle(sagaWorkflowId(name)).describe();
      return (desc.raw.pendingActivities ?? []).find((a) => a.activityType?.name === 'projectProgress');
    };
    const first = await waitFor(
      'the PROGRESS.md projector to run',
      async () => {
        const projector = await projectorOf();
        return projector?.lastStartedTime ? projector : undefined;
      },
      30_000,
    );

    const stopped = Date.now();
    expect(await worker.stop('SIGINT', 90_000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopped).toBeLessThan(30_000);
    expect(worker.output()).not.toMatch(/projection failed|Activity failed|unexpected error/i);

    // It completed (no failed attempt for the server to time out): the saga schedules a new one, which the
    // host's next worker runs, as its first attempt.
    const next = await spawnWorker(env, env.hostId);
    const second = await waitFor(
      'a new projector on the next worker',
      async () => {
        const projector = await projectorOf();
        return projector?.lastStartedTime && projector.activityId !== first.activityId
          ? projector
          : undefined;
      },
      30_000,
    );
    expect(second.attempt).toBe(1);
    await env.client.workflow.getHandle(sagaWorkflowId(name)).terminate('test done');
    await next.stop('SIGTERM', 40_000);
  }, 240_000);
});

/** A one-task saga, its name confirmed: it waits for plan approval, and its saga directory exists. */
async function startWaitingSaga(env: SagaTestEnv, repo: string, dir: string, name: string): Promise<void> {
  process.env.SAGA_HOME = env.sagaHome;
  process.env.SAGA_HOST_ID = env.hostId;
  process.env.SAGA_TASK_QUEUE = env.taskQueue;
  const input = await prepareSaga({ repo, argumentsText: '', plan: writeOneTaskPlan(dir, name), name });
  await startSaga(env.client, input);
  await waitForPending(env, name, 'confirm-name', 30_000);
  await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
  await waitForPending(env, name, 'plan-approval-1', 30_000);
}
