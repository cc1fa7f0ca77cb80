/**
 * Two saga workers on one machine, as two hosts would run them (README, Scaling out): each saga's host-bound work
 * (git, agents, checks) runs only on the worker of the host that holds its repo; workflow tasks go to the
 * shared queue that both serve. Stopping one worker pauses only its sagas; they resume when it returns.
 */
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { respond } from '../../../src/client/saga-client';
import { createSampleRepo } from '../../../src/demo/sample-repo';
import {
  hostTaskQueue,
  projectorTaskQueue,
  phaseWorkflowId,
  sagaWorkflowId,
  taskWorkflowId,
} from '../../../src/domain/contract/naming';
import { writeOneTaskPlan } from '../../harness/one-task-plan';
import { createSagaTestEnv, sagaStatus, waitForPending, type SagaTestEnv } from '../../harness/saga-env';
import { sagaHistories } from '../../harness/fleet-saga';
import { ensureBuilt, killStrayWorkers, spawnWorker, type WorkerProcess } from '../../harness/worker-process';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const activityQueues = (events: HistoryEvent[]) =>
  events.flatMap((e) => e.activityTaskScheduledEventAttributes?.taskQueue?.name ?? []);
const activityIdentities = (events: HistoryEvent[]) =>
  events.flatMap((e) => e.activityTaskStartedEventAttributes?.identity ?? []);
const workflowTaskIdentities = (events: HistoryEvent[]) =>
  events.flatMap((e) => e.workflowTaskCompletedEventAttributes?.identity ?? []);

const demoRuns = (logFile: string): { role: string; taskId: string }[] =>
  existsSync(logFile)
    ? readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { role: string; taskId: string })
    : [];

describe('two workers, one machine', () => {
  let env: SagaTestEnv;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    env = await createSagaTestEnv('multiworker');
    await ensureBuilt();
  });
  afterAll(async () => {
    await killStrayWorkers();
    await env.close();
  });

  test('host-bound work stays on its host; stopping a worker pauses only its sagas', async () => {
    const hosts = ['a', 'b'].map((h) => {
      const dir = env.tmp(`host-${h}`);
      return {
        hostId: `${env.hostId}-${h}`,
        home: path.join(dir, 'home'),
        demoLog: path.join(dir, 'demo.log'),
        repo: createSampleRepo(path.join(dir, 'greeting')),
        name: `mw-${h}-${env.hostId.slice(-6)}`,
        plan: writeOneTaskPlan(dir, `mw-${h}`),
      };
    });
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const workerEnv = (h: typeof a) => ({ SAGA_HOME: h.home, SAGA_DEMO_LOG: h.demoLog });
    const [workerA, workerB1] = await Promise.all([
      spawnWorker(env, a.hostId, workerEnv(a)),
      spawnWorker(env, b.hostId, workerEnv(b)),
    ]);
    workers.push(workerA, workerB1);

    // Each saga is started on "its" host: the host id recorded in the saga picks its activity queue.
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    for (const h of hosts) {
      process.env.SAGA_HOME = h.home;
      process.env.SAGA_HOST_ID = h.hostId;
      const input = await prepareSaga({ repo: h.repo, argumentsText: '', plan: h.plan, name: h.name });
      expect(input.hostQueue).toBe(hostTaskQueue(h.hostId));
      await startSaga(env.client, input);
    }
    for (const h of hosts) {
      await waitForPending(env, h.name, 'confirm-name', 30_000);
      await respond(env.client, h.name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
    }
    await Promise.all(hosts.map((h) => waitForPending(env, h.name, 'plan-approval-1', 30_000)));

    // Host B goes away; both plans are approved.
    expect((await workerB1.stop('SIGTERM')).code).toBe(0);
    const bRunsBefore = demoRuns(b.demoLog).length;
    for (const h of hosts)
      await respond(env.client, h.name, {
        interactionId: 'plan-approval-1',
        choice: 'approve',
        user: 'test',
      });

    // Saga A runs to acceptance on worker A alone...
    await waitForPending(env, a.name, 'acceptance-1', 90_000);
    // ...while saga B's first host activity after approval (removing its planning worktree) waits,
    // unstarted, on host B's queue.
    const bPlanning = env.client.workflow.getHandle(phaseWorkflowId(b.name, 'planning'));
    const pendingOfB = async () => (await bPlanning.describe()).raw.pendingActivities ?? [];
    const deadline = Date.now() + 20_000;
    while ((await pendingOfB().catch(() => [])).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 300));
    const [waiting] = await pendingOfB();
    expect(waiting?.activityType?.name).toBe('finishPlanningWorktree');
    expect(waiting?.state).toBe(temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED);
    expect((await sagaStatus(env, b.name)).phase).toBe('planning');
    expect(demoRuns(b.demoLog)).toHaveLength(bRunsBefore);

    // Host B returns and its saga resumes where it stopped.
    const workerB2 = await spawnWorker(env, b.hostId, workerEnv(b));
    workers.push(workerB2);
    await waitForPending(env, b.name, 'acceptance-1', 90_000);

    // Every host activity of each saga (parent and all children) was scheduled on its host's queue and
    // executed by that host's worker process.
    const expectations = [
      { host: a, identities: [workerA.identityPrefix] },
      { host: b, identities: [workerB1.identityPrefix, workerB2.identityPrefix] },
    ];
    const histories = new Map<string, Map<string, HistoryEvent[]>>();
    for (const { host, identities } of expectations) {
      const perWorkflow = await sagaHistories(env.client, sagaWorkflowId(host.name));
      histories.set(host.name, perWorkflow);
      const events = [...perWorkflow.values()].flat();
      expect(perWorkflow.has(taskWorkflowId(host.name, 1, 1))).toBe(true);
      const queues = activityQueues(events);
      expect(queues.length).toBeGreaterThan(5);
      // The host's queues: its work, and its PROGRESS.md projector's.
      const hostQueue = hostTaskQueue(host.hostId);
      expect(new Set(queues)).toEqual(new Set([hostQueue, projectorTaskQueue(hostQueue)]));
      const ran = activityIdentities(events);
      expect(ran.length).toBeGreaterThan(5);
      for (const identity of ran) expect(identities.some((p) => identity.startsWith(p))).toBe(true);
      // The agent processes were children of that host's worker (its environment, its demo log).
      expect(demoRuns(host.demoLog).map((r) => `${r.role} ${r.taskId}`)).toContain('implementer 1.1');
    }
    // While B was away, worker A ran saga B's workflow code from the shared queue.
    const bWorkflowTasks = [...histories.get(b.name)!.values()].flat();
    expect(workflowTaskIdentities(bWorkflowTasks).some((id) => id.startsWith(workerA.identityPrefix))).toBe(
      true,
    );

    for (const h of hosts) await env.client.workflow.getHandle(sagaWorkflowId(h.name)).terminate('test done');
    await Promise.all([workerA.stop(), workerB2.stop()]);
  }, 240_000);
});
