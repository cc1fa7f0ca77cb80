/**
 * The saga budget during planning and the plan's cost estimate (docs/PROCEDURE.md §3.14), against a real server, real
 * git and the demo agent (its planner runs report a cost): a planner run that would start over the saga
 * budget asks the same `budget` question (raise / stop); planner spend counts in the saga's total (and in the
 * fleet's budget); each finished saga writes its cost record, and a later plan's approval shows the estimate
 * from the earlier sagas in the saga home (in the prompt and in SAGA.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { SAGA_COST_RECORD_FILE, SagaCostRecordSchema } from '../../../../src/domain/fleet/budget';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { createFleetRepo, planTask } from '../../../harness/fleet-saga';
import { saveEnv } from '../../../harness/process-env';
import {
  createSagaTestEnv,
  demoInvocations,
  useEnvInProcess,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

let env: SagaTestEnv;
let restoreEnv: () => void;
let demoLog: string;

beforeAll(async () => {
  env = await createSagaTestEnv('budget-planning');
  restoreEnv = saveEnv(['SAGA_DEMO_LOG']);
  useEnvInProcess(env);
  await env.startWorkers();
}, 60_000);
afterAll(async () => {
  await env?.close();
  restoreEnv?.();
});

const cost = (usd: number) => ({ usage: { input_tokens: 100, output_tokens: 10, cost_usd: usd } });
const plan = (name: string, tasks: Record<string, unknown>[]) => ({
  name,
  problem: `Budget planning scenario ${name}.`,
  scope: { in: ['everything'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'the repo is there', check: 'test -f README.md' }],
  milestones: [
    {
      id: 1,
      slug: 'm1',
      title: 'Milestone 1',
      depends_on: [],
      goal: 'Budget planning scenario.',
      validation: [{ text: 'milestone check', check: 'true' }],
      tasks,
    },
  ],
});
const plannerRuns = () => demoInvocations(demoLog).filter((r) => r.role === 'planner');
const sagaDir = (name: string) => path.join(env.sagaHome, name);
/** The saga's cost record, once its last PROGRESS.md write (after the phase changed) has written it. */
async function costRecord(name: string) {
  const file = path.join(sagaDir(name), SAGA_COST_RECORD_FILE);
  for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  return SagaCostRecordSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}
const byId = (s: SagaStatus) => new Map(s.milestones.flatMap((m) => m.tasks).map((t) => [t.id, t]));

/** Starts a saga whose planner runs (no --plan) and confirms its name. */
async function startPlannedSaga(
  name: string,
  config: string,
  script: Record<string, unknown>,
  tasks: Record<string, unknown>[],
): Promise<void> {
  demoLog = `${env.tmp(`log-${name}`)}/demo.jsonl`;
  process.env.SAGA_DEMO_LOG = demoLog;
  const thePlan = plan(name, tasks);
  const { repo } = createFleetRepo(env.tmp(name), {
    config,
    script: { ...script, planner: { ...(script.planner as object), plan: thePlan } },
    plan: thePlan,
  });
  process.env.SAGA_HOME = env.sagaHome;
  process.env.SAGA_HOST_ID = env.hostId;
  process.env.SAGA_TASK_QUEUE = env.taskQueue;
  const input = await prepareSaga({ repo, argumentsText: `--subagents Budget ${name}`, name });
  await startSaga(env.client, input);
  await waitForPending(env, name, 'confirm-name');
  await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
}

// The three run in order: the first saga's cost record is what the second's estimate is made from.
test('a planner run over the saga budget asks to raise; planner spend counts in the total; the cost record is written', async () => {
  const name = 'plan-raise';
  await startPlannedSaga(
    name,
    'budget:\n  saga_usd: 0.5\n',
    {
      planner: cost(0.6),
      tasks: {
        '1.1': { attempts: [{ files: { 'f1.txt': '1\n' }, ...cost(0.02) }] },
        '1.2': { attempts: [{ files: { 'f2.txt': '2\n' }, ...cost(0.04) }] },
      },
    },
    [planTask(1, 'one', ['f1.txt'], 'test -f f1.txt'), planTask(2, 'two', ['f2.txt'], 'test -f f2.txt')],
  );
  // The questions run spent $0.60 of $0.50: the criteria run does not start before the answer.
  const asked = await waitForPending(env, name, /^budget-planning-/, 60_000);
  const question = asked.pending.find((p) => p.kind === 'budget')!;
  expect(question).toMatchObject({ options: ['raise', 'stop'], textFormat: 'budget-amount' });
  expect(question.prompt).toMatch(/spent \$0\.60, over its budget of \$0\.5/);
  expect(plannerRuns().map((r) => r.stage)).toEqual(['questions']);
  await expect(
    respond(env.client, name, { interactionId: question.id, choice: 'raise', text: 'more', user: 'test' }),
  ).rejects.toThrow(/not a budget/);
  await respond(env.client, name, { interactionId: question.id, choice: 'raise', text: '+5', user: 'test' });
  const approval = await waitForPending(env, name, 'plan-approval-1', 60_000);
  expect(plannerRuns().map((r) => r.stage)).toEqual(['questions', 'criteria', 'plan']);
  // No earlier saga in this saga home: no estimate.
  expect(approval.pending[0]!.prompt).not.toMatch(/Estimated cost/);
  expect(readFileSync(path.join(sagaDir(name), 'SAGA.md'), 'utf8')).not.toMatch(/Estimated cost/);
  await respond(env.client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
  // The raised budget ($5.50) holds for the fleet: both tasks run.
  const accepting = await waitForPending(env, name, 'acceptance-1', 150_000);
  expect([...byId(accepting).values()].map((t) => t.status)).toEqual(['integrated', 'integrated']);
  expect(accepting.usage!.costUsd).toBeCloseTo(1.86, 5); // 3 planner runs + 2 tasks
  await respond(env.client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
  await waitForStatus(env, name, (s) => s.phase === 'complete', 60_000);
  const record = await costRecord(name);
  expect(record).toMatchObject({ saga: name, tasks: { '1.1': 0.02, '1.2': 0.04 } });
  expect(record.totalUsd).toBeCloseTo(1.86, 5);
}, 300_000);

test('a later plan shows the estimate from earlier sagas; planner spend counts in the fleet budget', async () => {
  const name = 'plan-estimate';
  await startPlannedSaga(
    name,
    'budget:\n  saga_usd: 1\n',
    {
      planner: cost(0.2),
      tasks: { '1.1': { attempts: [{ files: { 'f1.txt': '1\n' }, ...cost(0.5) }] } },
    },
    [
      planTask(1, 'one', ['f1.txt'], 'test -f f1.txt'),
      planTask(2, 'two', ['f2.txt'], 'test -f f2.txt', ['1.1']),
      planTask(3, 'three', ['f3.txt'], 'test -f f3.txt', ['1.1']),
    ],
  );
  const approval = await waitForPending(env, name, 'plan-approval-1', 60_000);
  // 3 tasks × the median of the first saga's task costs (0.02, 0.04).
  const estimate =
    'Estimated cost: ~$0.09 (3 tasks × median task cost $0.03 of 1 earlier saga) — an estimate, not a limit.';
  expect(approval.pending[0]!.prompt).toContain(estimate);
  expect(readFileSync(path.join(sagaDir(name), 'SAGA.md'), 'utf8')).toContain(estimate);
  await respond(env.client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
  // Planning spent $0.60 (questions, criteria, plan); task 1.1's $0.50 takes the saga to $1.10, over $1: the next tasks wait.
  const asked = await waitForPending(env, name, /^budget-r1-/, 150_000);
  const question = asked.pending.find((p) => p.kind === 'budget')!;
  expect(question.prompt).toMatch(/spent \$1\.10, over its budget of \$1/);
  expect(byId(asked).get('1.2')!.status).toBe('pending');
  await respond(env.client, name, { interactionId: question.id, choice: 'stop', user: 'test' });
  await waitForStatus(env, name, (s) => s.phase === 'cancelled', 60_000);
  // A cancelled saga records its costs too; the estimate stays in SAGA.md as the approver saw it.
  expect((await costRecord(name)).tasks).toEqual({ '1.1': 0.5 });
  expect(readFileSync(path.join(sagaDir(name), 'SAGA.md'), 'utf8')).toContain(estimate);
}, 300_000);

test('stop at the planning budget question ends the saga before the plan run', async () => {
  const name = 'plan-stop';
  await startPlannedSaga(name, 'budget:\n  saga_usd: 0.1\n', { planner: cost(0.2) }, [
    planTask(1, 'one', ['f1.txt'], 'test -f f1.txt'),
  ]);
  const asked = await waitForPending(env, name, /^budget-planning-/, 60_000);
  const question = asked.pending.find((p) => p.kind === 'budget')!;
  await respond(env.client, name, { interactionId: question.id, choice: 'stop', user: 'test' });
  const end = await waitForStatus(env, name, (s) => s.phase === 'cancelled', 60_000);
  expect(plannerRuns().map((r) => r.stage)).toEqual(['questions']);
  expect(end.log.join('\n')).toMatch(/Planning stopped at the saga budget/);
  expect(await costRecord(name)).toMatchObject({ saga: name, tasks: {} });
}, 120_000);
