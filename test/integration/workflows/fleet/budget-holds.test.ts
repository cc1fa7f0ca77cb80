/**
 * Budgets that hold (docs/PROCEDURE.md §3.14), against a real server, real git and the demo agent: the saga budget
 * gates every agent run (a running task's next attempt too), running agents finish their run or, with
 * `budget.on_exhausted: stop`, are stopped with their work committed; the saga waits with the `budget`
 * interaction (raise with a checked amount, or stop); the 80 % warning goes out once.
 */
import { execFileSync } from 'node:child_process';
import { respond } from '../../../../src/client/saga-client';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import {
  createFleetRepo,
  git,
  planTask,
  sagaWorktrees,
  startApprovedSaga,
} from '../../../harness/fleet-saga';
import { startHttpRecorder, type HttpRecorder } from '../../../harness/http-recorder';
import { saveEnv } from '../../../harness/process-env';
import { processesWithEnv } from '../../../harness/processes';
import {
  createSagaTestEnv,
  demoInvocations,
  useEnvInProcess,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

const CHAT_ENV = ['SAGA_NOTIFY_URL', 'SAGA_NOTIFY_SECRET', 'SAGA_REMIND_AFTER_MS', 'SAGA_DEMO_LOG'] as const;
let env: SagaTestEnv;
let receiver: HttpRecorder;
let restoreEnv: () => void;
let demoLog: string;

beforeAll(async () => {
  env = await createSagaTestEnv('budget');
  receiver = await startHttpRecorder(() => ({ ok: true }));
  restoreEnv = saveEnv(CHAT_ENV);
  Object.assign(process.env, {
    SAGA_NOTIFY_URL: `${receiver.url}/notify`,
    SAGA_NOTIFY_SECRET: 'budget-test-secret',
    SAGA_REMIND_AFTER_MS: '600000',
  });
  useEnvInProcess(env);
  await env.startWorkers();
}, 60_000);
afterAll(async () => {
  await env?.close();
  await receiver?.close();
  restoreEnv?.();
});

const plan = (name: string, tasks: Record<string, unknown>[]) => ({
  name,
  problem: `Budget scenario ${name}.`,
  scope: { in: ['everything'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'the repo is there', check: 'test -f README.md' }],
  milestones: [
    {
      id: 1,
      slug: 'm1',
      title: 'Milestone 1',
      depends_on: [],
      goal: 'Budget scenario.',
      validation: [{ text: 'milestone check', check: 'true' }],
      tasks,
    },
  ],
});
const cost = (usd: number) => ({ usage: { input_tokens: 100, output_tokens: 10, cost_usd: usd } });
const byId = (s: SagaStatus) => new Map(s.milestones.flatMap((m) => m.tasks).map((t) => [t.id, t]));
const runsOf = (taskId: string) =>
  demoInvocations(demoLog).filter((r) => r.role === 'implementer' && r.taskId === taskId);
/** Each saga its own demo log (the in-process workers' agents read SAGA_DEMO_LOG when they start). */
const useDemoLog = (name: string) => {
  demoLog = `${env.tmp(`log-${name}`)}/demo.jsonl`;
  process.env.SAGA_DEMO_LOG = demoLog;
};
/** Demo agents of this saga still running (a confined agent's logged pid is its namespace's: by environment). */
const agentsRunning = () => processesWithEnv(`SAGA_DEMO_LOG=${demoLog}`);
const budgetWarnings = (name: string) =>
  receiver.requests.filter((r) => {
    const body = JSON.parse(r.rawBody || '{}') as { saga?: string; interaction?: { kind?: string } };
    return body.saga === name && body.interaction?.kind === 'budget-warning';
  });

test('finish: the running agent finishes its run, no later attempt or task starts, raise continues', async () => {
  const name = 'budget-finish';
  useDemoLog(name);
  const { repo, planFile } = createFleetRepo(env.tmp(name), {
    config: 'budget:\n  saga_usd: 0.05\n',
    script: {
      tasks: {
        // 90 %: the warning goes out.
        '1.1': { attempts: [{ files: { 'f1.txt': '1\n' }, ...cost(0.045) }] },
        // Its first run crosses the budget while it runs and fails its check: attempt 2 must not start.
        '1.2': {
          attempts: [
            { files: { 'wip2.txt': 'x\n' }, sleep_ms: 4000, ...cost(0.01) },
            { files: { 'f2.txt': '2\n' }, ...cost(0.001) },
          ],
        },
        '1.3': { attempts: [{ files: { 'f3.txt': '3\n' }, ...cost(0.001) }] },
      },
    },
    plan: plan(name, [
      planTask(1, 'one', ['f1.txt'], 'test -f f1.txt'),
      planTask(2, 'two', ['f2.txt', 'wip2.txt'], 'test -f f2.txt'),
      planTask(3, 'three', ['f3.txt'], 'test -f f3.txt', ['1.1', '1.2']),
    ]),
  });
  await startApprovedSaga(env, { repo, planFile, name, args: '--subagents --parallel=2 Budget finish' });
  const asked = await waitForPending(env, name, /^budget-/, 150_000);
  const question = asked.pending.find((p) => p.kind === 'budget')!;
  expect(question.prompt).toMatch(/spent \$0\.06, over its budget of \$0\.05/);
  // The running task finished its run and then stopped: back to pending, not blocked.
  const waiting = await waitForStatus(
    env,
    name,
    (s) => byId(s).get('1.2')!.status === 'pending' && (s.usage?.costUsd ?? 0) > 0.05,
    60_000,
  );
  expect(byId(waiting).get('1.3')!.status).toBe('pending');
  expect(runsOf('1.2').map((r) => r.attempt)).toEqual([1]);
  expect(runsOf('1.3')).toEqual([]);
  expect(agentsRunning()).toEqual([]);
  expect(sagaWorktrees(repo, name)).toEqual([]);
  // The first run's work is on the task branch.
  expect(git(repo, 'show', `${byId(waiting).get('1.2')!.branch}:wip2.txt`)).toBe('x');
  // Bad raise text is refused with the reason; "+X" raises by X.
  await expect(
    respond(env.client, name, { interactionId: question.id, choice: 'raise', text: 'lots', user: 'test' }),
  ).rejects.toThrow(/not a budget/);
  await respond(env.client, name, { interactionId: question.id, choice: 'raise', text: '+1', user: 'test' });
  const done = await waitForPending(env, name, 'acceptance-1', 150_000);
  expect([...byId(done).values()].map((t) => t.status)).toEqual(['integrated', 'integrated', 'integrated']);
  expect(done.log.join('\n')).toMatch(/Saga budget is now \$1\.05/);
  // The 80 % warning went out once.
  expect(budgetWarnings(name)).toHaveLength(1);
  expect(JSON.parse(budgetWarnings(name)[0]!.rawBody) as unknown).toMatchObject({
    interaction: { prompt: expect.stringMatching(/spent \$0\.0\d of its \$0\.05 budget/) as unknown },
  });
}, 300_000);

test('stop: running agents are stopped, their work is on their branch; answering stop ends the saga', async () => {
  const name = 'budget-stop';
  useDemoLog(name);
  const { repo, planFile } = createFleetRepo(env.tmp(name), {
    config: 'budget:\n  saga_usd: 0.05\n  on_exhausted: stop\n',
    script: {
      tasks: {
        '1.1': { attempts: [{ files: { 'f1.txt': '1\n' }, sleep_ms: 1500, ...cost(0.06) }] },
        // Writes its work, then runs long: the budget stop must end it.
        '1.2': { attempts: [{ files: { 'wip.txt': 'half done\n' }, sleep_ms: 120_000, ...cost(0.001) }] },
      },
    },
    plan: plan(name, [
      planTask(1, 'one', ['f1.txt'], 'test -f f1.txt'),
      planTask(2, 'two', ['wip.txt'], 'test -f wip.txt'),
    ]),
  });
  await startApprovedSaga(env, { repo, planFile, name, args: '--subagents --parallel=2 Budget stop' });
  const asked = await waitForPending(env, name, /^budget-/, 150_000);
  const stopped = await waitForStatus(env, name, (s) => byId(s).get('1.2')!.status === 'pending', 60_000);
  expect(stopped.pending.some((p) => p.kind === 'budget')).toBe(true);
  const run = runsOf('1.2');
  expect(run).toHaveLength(1);
  expect(agentsRunning()).toEqual([]);
  expect(git(repo, 'show', `${byId(stopped).get('1.2')!.branch}:wip.txt`)).toBe('half done');
  expect(sagaWorktrees(repo, name)).toEqual([]);
  const question = asked.pending.find((p) => p.kind === 'budget')!;
  await respond(env.client, name, { interactionId: question.id, choice: 'stop', user: 'test' });
  const end = await waitForStatus(env, name, (s) => s.phase === 'cancelled', 60_000);
  expect(byId(end).get('1.2')!.status).toBe('pending');
  expect(sagaWorktrees(repo, name)).toEqual([]);
  expect(execFileSync('git', ['-C', repo, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');
}, 300_000);

test('the resolver is gated: a conflict met after the budget is spent waits for the budget answer', async () => {
  const name = 'budget-resolver';
  useDemoLog(name);
  const { repo, planFile } = createFleetRepo(env.tmp(name), {
    config: 'budget:\n  saga_usd: 0.05\n',
    script: {
      tasks: {
        '1.1': { attempts: [{ files: { 'shared.txt': 'one\n', 'a.txt': 'a\n' }, ...cost(0.01) }] },
        // Its run (ending after 1.1's began) takes the saga over the budget; its merge conflicts with 1.1's.
        '1.2': {
          attempts: [{ files: { 'shared.txt': 'two\n', 'b.txt': 'b\n' }, sleep_ms: 2000, ...cost(0.05) }],
        },
      },
      resolver: { mode: 'union' },
    },
    plan: plan(name, [
      planTask(1, 'one', ['a.txt'], 'test -f a.txt'),
      planTask(2, 'two', ['b.txt'], 'test -f b.txt'),
    ]),
  });
  await startApprovedSaga(env, { repo, planFile, name, args: '--subagents --parallel=2 Budget resolver' });
  await waitForPending(env, name, /^budget-/, 150_000);
  const waiting = await waitForStatus(
    env,
    name,
    (s) => s.log.some((l) => /Merge conflict integrating 1\.2: shared\.txt; asking the resolver/.test(l)),
    60_000,
  );
  // Time for a resolver that was not held back to start.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const held = await waitForStatus(env, name, () => true);
  expect(demoInvocations(demoLog).filter((r) => r.role === 'resolver')).toEqual([]);
  expect(held.milestones[0]!.status).toBe('integrating');
  const question = held.pending.find((p) => p.kind === 'budget')!;
  expect(question.prompt).toMatch(/over its budget of \$0\.05/);
  expect(waiting.usage!.costUsd).toBeCloseTo(0.06, 5);
  await respond(env.client, name, { interactionId: question.id, choice: 'raise', text: '+1', user: 'test' });
  const done = await waitForPending(env, name, 'acceptance-1', 150_000);
  expect(demoInvocations(demoLog).filter((r) => r.role === 'resolver')).toHaveLength(1);
  expect(done.log.join('\n')).toMatch(/Resolver fixed the conflict of 1\.2/);
  expect(git(repo, 'show', `saga/${name}/integration:shared.txt`)).toBe('one\ntwo');
}, 300_000);
