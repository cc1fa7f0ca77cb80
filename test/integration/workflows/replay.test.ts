/**
 * Determinism: the histories kept for every released version (test/fixtures/histories/<version>/, one per
 * workflow type; the saga and planning phase are recorded by test/integration/workflows/planning/planning.test.ts) replay on
 * the current workflow code, so sagas still running on those releases keep running after an upgrade; and so
 * do the histories of a saga run right here (saga, phases and tasks). The same run shows per-task worktree
 * set-up: git-ignored files copied, set-up commands run, and a port range of its own for every task.
 *
 * Kept histories are never re-recorded (README: Versioning): a release that changes workflow code adds its
 * own with `RECORD_HISTORIES=1 npx jest test/integration/workflows/replay.test.ts test/integration/workflows/planning/planning.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { respond } from '../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId } from '../../../src/domain/contract/naming';
import type { SagaStatus } from '../../../src/domain/contract/state';
import * as workflows from '../../../src/workflows';
import {
  compareVersions,
  CURRENT_VERSION,
  keptHistories,
  keptVersions,
  latestHistoryFile,
  recordHistory,
} from '../../harness/histories';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../harness/saga-env';
import { WORKFLOW_BUNDLE } from '../../harness/server';

interface RecordedEvent {
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string } };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
}
const activitiesOf = (events: RecordedEvent[]) =>
  events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
const replayOptions = { workflowBundle: { codePath: WORKFLOW_BUNDLE } };
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/**
 * Registered only so that sagas of older releases still in that phase finish; no saga starts them now (the
 * saga runs acceptance itself, and 0.2.0 recorded none), so a fresh release cannot record one.
 */
const RETIRED_WORKFLOWS = ['acceptanceWorkflow'];

/**
 * Workflow types new in the version being made: no earlier release could record them, so their kept history
 * is this version's own (the delivery watch's, recorded by delivery-gitea.test.ts with RECORD_HISTORIES=1; the
 * issue sync's and the tracker watch's by their tests in test/integration/workflows/tracker/).
 */
const INTRODUCED_IN_CURRENT: Record<string, string> = {
  deliveryWorkflow: '0.3.0',
  issueSyncWorkflow: '0.3.0',
  trackerWatchWorkflow: '0.3.0',
};

describe('workflow histories replay', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('replay'); // also quiets the SDK's logging for the replay workers
  });
  afterAll(async () => env.close());

  test('the previous release keeps a history of every workflow type a saga starts; every type has one', () => {
    const previous = keptVersions().filter((v) => compareVersions(v, CURRENT_VERSION) < 0);
    expect(previous.length).toBeGreaterThan(0);
    const kept = keptHistories(previous.at(-1)!).map((h) => h.workflowType);
    const started = Object.keys(workflows).filter(
      (type) => !RETIRED_WORKFLOWS.includes(type) && INTRODUCED_IN_CURRENT[type] !== CURRENT_VERSION,
    );
    expect(kept.sort()).toEqual(started.sort());
    const keptAnywhere = new Set(keptVersions().flatMap((v) => keptHistories(v).map((h) => h.workflowType)));
    expect(Object.keys(workflows).filter((type) => !keptAnywhere.has(type))).toEqual([]);
  });

  test.each(
    keptVersions().flatMap((version) => keptHistories(version).map((h) => [version, h.workflowType, h.file])),
  )('the %s history of %s replays on the current code', async (_version, type, file) => {
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as { events: RecordedEvent[] };
    expect(recorded.events[0]!.workflowExecutionStartedEventAttributes?.workflowType?.name).toBe(type);
    await expect(Worker.runReplayHistory(replayOptions, recorded)).resolves.toBeUndefined();
  });

  test('the recorded task history is a task that needed two attempts (one activity each)', () => {
    const recorded = JSON.parse(readFileSync(latestHistoryFile('taskWorkflow'), 'utf8')) as {
      events: RecordedEvent[];
    };
    expect(recorded.events.at(-1)!.eventType).toMatch(/WORKFLOW_EXECUTION_COMPLETED/);
    expect(activitiesOf(recorded.events)).toEqual(['runTaskAttempt', 'runTaskAttempt']);
  });

  test('workflow code leaves the YAML parser out (every workflow run would evaluate its modules)', () => {
    const bundle = readFileSync(WORKFLOW_BUNDLE, 'utf8');
    expect(bundle).toMatch(/domain\/plan\/validate\.[jt]s/);
    expect(bundle).not.toMatch(/node_modules\/yaml\//);
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
        trustRepoConfig: true,
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
      // The saga and planning histories come from test/integration/workflows/planning/planning.test.ts (a richer planning
      // phase); sagas no longer start the acceptance workflow (its 0.1.0 history stays for sagas that did).
      recordHistory('implementationWorkflow', histories.find((h) => h.workflowId === ids[2])!.history);
      recordHistory('validationWorkflow', histories.find((h) => h.workflowId === ids[3])!.history);
      recordHistory('taskWorkflow', twoAttempts.history);
      const failures: string[] = [];
      for await (const result of Worker.runReplayHistories(replayOptions, histories)) {
        if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
      }
      expect(failures).toEqual([]);
      expect(histories).toHaveLength(4 + 3);
    });
  });
});
