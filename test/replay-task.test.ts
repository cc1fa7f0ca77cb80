/**
 * Determinism: a recorded task history (test/fixtures/histories/) replays on the current workflow code,
 * and so do the histories of a saga run right here (saga, planning, implementation, validation, tasks).
 * The same run shows per-task worktree set-up: git-ignored files copied, set-up commands run, and a port
 * range of its own for every task.
 *
 * `RECORD_HISTORIES=1 npx jest test/replay-task.test.ts` rewrites the recorded fixture from this run.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { prepareSaga, startSaga } from '../src/client/commands/start';
import { respond } from '../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId } from '../src/domain/naming';
import type { SagaStatus } from '../src/domain/state';
import { BUDGET_HOLDS_PATCH, LAUNCH_WITHOUT_WAITING_PATCH } from '../src/workflows/implementation';
import { INTEGRATION_SETUP_PATCH, MERGE_BATCH_PATCH } from '../src/workflows/integration';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from './harness/saga-env';
import { WORKFLOW_BUNDLE } from './harness/server';

const RECORDED = path.join(__dirname, 'fixtures', 'histories', 'task-two-attempts.json');
/** Recorded before one attempt became one activity: agent, checks and handoff as separate activities. */
const RECORDED_BEFORE_PATCH = path.join(
  __dirname,
  'fixtures',
  'histories',
  'task-two-attempts-before-patch.json',
);
interface RecordedEvent {
  eventType: string;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  markerRecordedEventAttributes?: {
    markerName?: string;
    details?: Record<string, { payloads?: { data?: string }[] }>;
  };
}
const activitiesOf = (events: RecordedEvent[]) =>
  events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
/** Patch ids recorded by `patched()` (core_patch markers carry `{"id": ...}` as their data). */
const patchIds = (events: RecordedEvent[]) =>
  events.flatMap((e) =>
    Object.values(e.markerRecordedEventAttributes?.details ?? {}).flatMap((d) =>
      (d.payloads ?? []).map(
        (p) => (JSON.parse(Buffer.from(p.data ?? '', 'base64').toString()) as { id?: string }).id,
      ),
    ),
  );
/** An 8-task, 4-lane implementation run recorded (by the bench) before LAUNCH_WITHOUT_WAITING_PATCH. */
const IMPLEMENTATION_BEFORE_PATCH = path.join(
  __dirname,
  'fixtures',
  'histories',
  'implementation-before-launch-patch.json',
);
const replayOptions = { workflowBundle: { codePath: WORKFLOW_BUNDLE } };
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

describe('workflow histories replay', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('replay'); // also quiets the SDK's logging for the replay workers
  });
  afterAll(async () => env.close());

  test('a recorded 2-attempt task history replays on the current code (one activity per attempt)', async () => {
    const recorded: unknown = JSON.parse(readFileSync(RECORDED, 'utf8'));
    const events = (recorded as { events: RecordedEvent[] }).events;
    expect(events.at(-1)!.eventType).toMatch(/WORKFLOW_EXECUTION_COMPLETED/);
    expect(activitiesOf(events)).toEqual(['runTaskAttempt', 'runTaskAttempt']);
    await expect(Worker.runReplayHistory(replayOptions, recorded)).resolves.toBeUndefined();
  });

  test('a task recorded before the patch (one activity per step) still replays', async () => {
    const recorded: unknown = JSON.parse(readFileSync(RECORDED_BEFORE_PATCH, 'utf8'));
    const events = (recorded as { events: RecordedEvent[] }).events;
    expect(events.at(-1)!.eventType).toMatch(/WORKFLOW_EXECUTION_COMPLETED/);
    expect(activitiesOf(events)).toEqual([
      'prepareTaskWorktree',
      'runRoleAgent',
      'runChecks',
      'runRoleAgent',
      'runChecks',
      'handoffTask',
    ]);
    await expect(Worker.runReplayHistory(replayOptions, recorded)).resolves.toBeUndefined();
  });

  test('an implementation run recorded before the launch patch still replays', async () => {
    const recorded: unknown = JSON.parse(readFileSync(IMPLEMENTATION_BEFORE_PATCH, 'utf8'));
    const events = (recorded as { events: RecordedEvent[] }).events;
    expect(patchIds(events)).toEqual([]);
    expect(
      events.filter((e) => e.eventType.endsWith('START_CHILD_WORKFLOW_EXECUTION_INITIATED')),
    ).toHaveLength(8);
    await expect(
      Worker.runReplayHistory(replayOptions, recorded, 'saga-bench-lanes-4-implementation'),
    ).resolves.toBeUndefined();
  });

  describe('a fresh saga', () => {
    let status: SagaStatus;
    let name: string;

    beforeAll(async () => {
      process.env.SAGA_HOME = env.sagaHome;
      process.env.SAGA_HOST_ID = env.hostId;
      process.env.SAGA_TASK_QUEUE = env.taskQueue;
      await env.startWorkers();
      const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
        failFirstAttempt: true,
        configExtra: [
          'worktree:',
          '  copy: [.env]',
          `  setup: [["sh", "-c", "echo port=$SAGA_PORT_BASE env=$(cat .env)"]]`,
          '',
        ].join('\n'),
      });
      writeFileSync(path.join(repo, '.gitignore'), '.env\n');
      git(repo, 'add', '.gitignore');
      git(repo, 'commit', '-q', '-m', 'ignore .env');
      writeFileSync(path.join(repo, '.env'), 'SECRET=42\n');

      const input = await prepareSaga({
        repo,
        argumentsText: '--subagents --parallel=2 Add a greeting',
        plan: GREETING_PLAN_FILE,
        name: 'replay',
      });
      name = input.name;
      await startSaga(env.client, input);
      await waitForPending(env, name, 'confirm-name');
      await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
      await waitForPending(env, name, 'plan-approval-1');
      await respond(env.client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
      status = await waitForPending(env, name, 'acceptance-1', 90_000);
    }, 120_000);
    afterAll(async () => {
      await env.client.workflow
        .getHandle(sagaWorkflowId(name))
        .terminate('test over')
        .catch(() => undefined);
    });

    test('every task worktree got the git-ignored .env, ran set-up, and had its own SAGA_PORT_BASE', () => {
      const tasks = status.milestones.flatMap((m) => m.tasks);
      expect(tasks.map((t) => t.status)).toEqual(['integrated', 'integrated', 'integrated']);
      const setupDir = path.join(status.sagaDir, 'runs', 'setup');
      const logs = readdirSync(setupDir)
        .filter((f) => /m\dt\d/.test(f))
        .map((f) => readFileSync(path.join(setupDir, f), 'utf8'));
      expect(logs).toHaveLength(3);
      const ports = logs.map((text) => {
        expect(text).toContain('env=SECRET=42');
        return Number(/port=(\d+)/.exec(text)?.[1]);
      });
      expect(ports.every((p) => p >= 1024 && p < 65_000)).toBe(true);
      expect(new Set(ports).size).toBe(3);
    });

    test('the histories of saga, phases and tasks replay on the current code', async () => {
      const taskIds = status.milestones.flatMap((m) => m.tasks.map((t) => t.workflowId!));
      const ids = [
        sagaWorkflowId(name),
        phaseWorkflowId(name, 'planning'),
        phaseWorkflowId(name, 'implementation'),
        phaseWorkflowId(name, 'validation'),
        phaseWorkflowId(name, 'acceptance'),
        ...taskIds,
      ];
      const histories = await Promise.all(
        ids.map(async (workflowId) => ({
          workflowId,
          history: await env.client.workflow.getHandle(workflowId).fetchHistory(),
        })),
      );
      const twoAttempts = histories.find((h) => h.workflowId === taskIds[0])!;
      expect(status.milestones[0]!.tasks[0]!.attempts).toBe(2);
      if (process.env.RECORD_HISTORIES === '1') {
        writeFileSync(RECORDED, `${historyToJSON(twoAttempts.history)}\n`);
      }
      const failures: string[] = [];
      for await (const result of Worker.runReplayHistories(replayOptions, histories)) {
        if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
      }
      expect(failures).toEqual([]);
      expect(histories).toHaveLength(5 + 3);
      const implementation = JSON.parse(
        historyToJSON(
          histories.find((h) => h.workflowId === phaseWorkflowId(name, 'implementation'))!.history,
        ),
      ) as { events: RecordedEvent[] };
      expect(patchIds(implementation.events)).toEqual([
        LAUNCH_WITHOUT_WAITING_PATCH,
        BUDGET_HOLDS_PATCH,
        INTEGRATION_SETUP_PATCH,
        MERGE_BATCH_PATCH,
      ]);
    });
  });
});
