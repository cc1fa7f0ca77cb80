/**
 * `saga watch`'s decisions, in seconds: the real trackerWatchWorkflow on Temporal's time-skipping test
 * server against a tracker kept in memory (test/harness/tracker-stand-ins.ts), starting stand-in sagas
 * under the saga's type name (test/harness/workflows/tracker-parent.ts) that run until the test finishes
 * them. Which sagas run is asked of the server by the real runningSagas activity.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createSagaAnswerActivities } from '../../../../src/activities/tracker/saga-answers';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { watchStatusQuery, watchStopSignal } from '../../../../src/domain/saga/messages';
import type { TrackerWatchInput, TrackerWatchStatus } from '../../../../src/domain/tracker/issue-sync';
import type { TrackerRef } from '../../../../src/domain/tracker/tracker-ref';
import { recordHistory } from '../../../harness/histories';
import { createStandInSagaEnv, type StandInSagaEnv } from '../../../harness/stand-in-saga-env';
import { MemoryTracker } from '../../../harness/tracker-stand-ins';
import {
  finishSagaSignal,
  sagaInputQuery,
  trackerWatchWorkflow,
} from '../../../harness/workflows/tracker-parent';

const QUEUE = 'tracker-watch';
const ref = (number: number): TrackerRef => ({ kind: 'gitea', owner: 'alice', repo: 'demo', number });

const watchInput = (maxSagas: number, pollSeconds: number): TrackerWatchInput => ({
  scope: { kind: 'gitea', owner: 'alice', repo: 'demo' },
  label: 'saga',
  tracker: { kind: 'gitea', url: 'http://tracker.invalid', tokenEnv: 'GITEA_TOKEN' },
  maxSagas,
  pollSeconds,
  argumentsText: '--autonomous',
  template: {
    repo: '/stand-in/repo',
    base: 'main',
    agent: null,
    configFile: null,
    trustRepoConfig: false,
    deliver: false,
    unconfined: [],
    sagaHome: '/stand-in/sagas',
    worktreeRoot: '/stand-in',
    hostId: 'test',
    hostQueue: QUEUE,
  },
});

/** Waits (real time, 20 s at most) until the watch's status satisfies `ok`. */
async function statusWhen(
  watch: WorkflowHandle,
  ok: (s: TrackerWatchStatus) => boolean,
): Promise<TrackerWatchStatus> {
  let status = await watch.query(watchStatusQuery);
  for (let waited = 0; !ok(status) && waited < 20_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    status = await watch.query(watchStatusQuery);
  }
  if (!ok(status)) throw new Error(`the watch never got there: ${JSON.stringify(status)}`);
  return status;
}

describe('saga watch (time-skipping test server)', () => {
  let fx: StandInSagaEnv;
  beforeAll(async () => {
    fx = await createStandInSagaEnv(require.resolve('../../../harness/workflows/tracker-parent'), 'watch');
  }, 120_000);
  afterAll(async () => fx?.env.teardown());

  const worker = (tracker: MemoryTracker) =>
    Worker.create({
      connection: fx.env.nativeConnection,
      taskQueue: QUEUE,
      workflowBundle: fx.workflowBundle,
      activities: { ...tracker.activities(), ...createSagaAnswerActivities() },
    });

  test('one saga per labelled issue, at most maxSagas running; a second watch starts none again; stop ends it', async () => {
    const tracker = new MemoryTracker({ missing: ['gitea:alice/demo#5'] });
    tracker.addIssue(ref(5), { labels: ['saga'] });
    tracker.addIssue(ref(1), { title: 'Greet people', labels: ['saga'] });
    tracker.addIssue(ref(2), { labels: ['saga', 'bug'] });
    tracker.addIssue(ref(3), { labels: ['saga'] });
    tracker.addIssue(ref(4), { labels: ['bug'] });
    await (
      await worker(tracker)
    ).runUntil(async () => {
      const watch = await fx.env.client.workflow.start(trackerWatchWorkflow, {
        taskQueue: QUEUE,
        workflowId: 'saga-watch-one',
        args: [watchInput(2, 60)],
      });
      const first = await statusWhen(watch, (s) => s.started.length === 2);
      expect(first.started.map((s) => s.ref)).toEqual(['gitea:alice/demo#1', 'gitea:alice/demo#2']);
      expect(first.running).toHaveLength(2);
      expect(first.waiting).toEqual(['gitea:alice/demo#3']);
      // The issue that cannot be read is recorded and skipped; the watch goes on.
      expect(first.lastError).toContain('gitea:alice/demo#5: 404');
      const saga1 = fx.env.client.workflow.getHandle(sagaWorkflowId(first.started[0]!.sagaName));
      const input = await saga1.query(sagaInputQuery);
      expect(input).toMatchObject({
        goal: 'Greet people',
        confirmedBy: 'saga watch (label saga)',
        source: { ref: ref(1), title: 'Greet people' },
        hostQueue: QUEUE,
      });
      expect(input.flags.autonomous).toBe(true);

      // A place frees: the next look starts the waiting issue.
      await saga1.signal(finishSagaSignal);
      await saga1.result();
      await fx.env.sleep(61_000);
      const second = await statusWhen(watch, (s) => s.started.length === 3);
      expect(second.started.map((s) => s.ref).at(-1)).toBe('gitea:alice/demo#3');
      expect(second.waiting).toEqual([]);
      const runIds = await Promise.all(second.started.map((s) => runIdOf(s.sagaName)));

      // Another watch over the same issues: each saga exists already, so it is only recorded.
      const again = await fx.env.client.workflow.start(trackerWatchWorkflow, {
        taskQueue: QUEUE,
        workflowId: 'saga-watch-two',
        args: [watchInput(5, 60)],
      });
      const seen = await statusWhen(again, (s) => s.started.length === 3);
      expect(seen.running.sort()).toEqual(
        second.started
          .slice(1)
          .map((s) => s.sagaName)
          .sort(),
      );
      expect(await Promise.all(seen.started.map((s) => runIdOf(s.sagaName)))).toEqual(runIds);

      // The sagas end first: an idle saga would otherwise wait out its timeout while time skips.
      for (const s of second.started.slice(1))
        await fx.env.client.workflow.getHandle(sagaWorkflowId(s.sagaName)).signal(finishSagaSignal);
      await again.signal(watchStopSignal);
      await watch.signal(watchStopSignal);
      expect((await watch.result()).stopping).toBe(true);
      await again.result();
      recordHistory('trackerWatchWorkflow', await watch.fetchHistory());
    });
  });

  test('across continue-as-new no issue is read or started twice', async () => {
    const tracker = new MemoryTracker();
    tracker.addIssue({ kind: 'gitea', owner: 'alice', repo: 'other', number: 7 }, { labels: ['saga'] });
    const input = { ...watchInput(3, 5), scope: { kind: 'gitea' as const, owner: 'alice', repo: 'other' } };
    await (
      await worker(tracker)
    ).runUntil(async () => {
      const watch = await fx.env.client.workflow.start(trackerWatchWorkflow, {
        taskQueue: QUEUE,
        workflowId: 'saga-watch-long',
        args: [input],
      });
      const firstRun = (await watch.describe()).runId;
      await statusWhen(watch, (s) => s.started.length === 1);
      // 50 looks a run: past them, the watch goes on in a new run with what it started.
      await fx.env.sleep(55 * 5_000);
      await statusWhen(
        watch,
        (s) => s.lastPollAt !== null && tracker.inputs('listLabelledIssues').length > 51,
      );
      expect((await watch.describe()).runId).not.toBe(firstRun);
      expect(tracker.inputs('readTrackerIssue')).toHaveLength(1);
      const status = await watch.query(watchStatusQuery);
      expect(status.started.map((s) => s.ref)).toEqual(['gitea:alice/other#7']);
      // The saga ends first: an idle saga would otherwise wait out its timeout while time skips.
      await fx.env.client.workflow
        .getHandle(sagaWorkflowId(status.started[0]!.sagaName))
        .signal(finishSagaSignal);
      await watch.signal(watchStopSignal);
      await watch.result();
    });
  }, 60_000);

  test('an issue an earlier saga marked (saga:done) starts none, even with its saga forgotten', async () => {
    const tracker = new MemoryTracker();
    const scope = { kind: 'gitea' as const, owner: 'alice', repo: 'forgot' };
    tracker.addIssue({ ...scope, number: 1 }, { labels: ['saga', 'saga:done'] });
    tracker.addIssue({ ...scope, number: 2 }, { labels: ['saga'] });
    await (
      await worker(tracker)
    ).runUntil(async () => {
      const watch = await fx.env.client.workflow.start(trackerWatchWorkflow, {
        taskQueue: QUEUE,
        workflowId: 'saga-watch-forgot',
        args: [{ ...watchInput(3, 60), scope }],
      });
      const status = await statusWhen(watch, (s) => s.started.length === 2);
      const [handled, fresh] = status.started;
      expect(handled).toMatchObject({ ref: 'gitea:alice/forgot#1', handledBefore: 'saga:done' });
      expect(fresh).toMatchObject({ ref: 'gitea:alice/forgot#2' });
      expect(fresh!.handledBefore).toBeUndefined();
      expect(status.running).toEqual([fresh!.sagaName]);
      expect(status.lastError).toBeNull();
      // No saga exists under the handled issue's id: none was started for it.
      await expect(
        fx.env.client.workflow.getHandle(sagaWorkflowId(handled!.sagaName)).describe(),
      ).rejects.toThrow(/not found/i);
      expect(tracker.inputs('readTrackerIssue')).toHaveLength(2);
      await fx.env.client.workflow.getHandle(sagaWorkflowId(fresh!.sagaName)).signal(finishSagaSignal);
      await watch.signal(watchStopSignal);
      await watch.result();
    });
  }, 60_000);

  const runIdOf = async (sagaName: string) =>
    (await fx.env.client.workflow.getHandle(sagaWorkflowId(sagaName)).describe()).runId;
});
