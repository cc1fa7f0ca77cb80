/**
 * Recovery in the fleet, against a real server, real git and the demo agent: merge conflicts the resolver
 * fixes and one it cannot (revert + re-delegation on top of the integrated state), a milestone whose
 * validation fails (revert + re-delegation with the failure output), blocked tasks answered through
 * `escalation` interactions (retry with a note, skip) while the rest keeps running, and a saga budget.
 * The four sagas run side by side on one set of workers.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderStatus } from '../../../../src/client/commands/inspect';
import { respond } from '../../../../src/client/saga-client';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import {
  createFleetRepo,
  git,
  planTask,
  sagaWorktrees,
  startApprovedSaga,
} from '../../../harness/fleet-saga';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

let envPromise: Promise<SagaTestEnv> | undefined;
/** One env for the concurrent tests (beforeAll is not awaited before concurrent tests start). */
const getEnv = () =>
  (envPromise ??= createSagaTestEnv('recovery').then(async (env) => {
    await env.startWorkers();
    return env;
  }));
afterAll(async () => (await envPromise)?.close());

const plan = (name: string, milestones: Record<string, unknown>[]) => ({
  name,
  problem: `Recovery scenario ${name}.`,
  scope: { in: ['everything'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'the repo is there', check: 'test -f README.md' }],
  milestones,
});
const milestone = (id: number, check: string, tasks: Record<string, unknown>[]) => ({
  id,
  slug: `m${id}`,
  title: `Milestone ${id}`,
  depends_on: id > 1 ? [id - 1] : [],
  goal: 'Recovery scenario.',
  validation: [{ text: `milestone ${id} check`, check }],
  tasks,
});
const writes = (files: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  attempts: [{ files, ...extra }],
});
const byId = (s: SagaStatus) => new Map(s.milestones.flatMap((m) => m.tasks).map((t) => [t.id, t]));
const answer = async (env: SagaTestEnv, name: string, interactionId: string, choice: string, text?: string) =>
  respond(env.client, name, { interactionId, choice, user: 'test', ...(text ? { text } : {}) });

async function finish(env: SagaTestEnv, name: string, repo: string): Promise<SagaStatus> {
  const status = await waitForPending(env, name, 'acceptance-1', 150_000);
  expect(sagaWorktrees(repo, name)).toEqual([]);
  return status;
}

describe('integration recovery', () => {
  test.concurrent(
    'merge conflicts: the resolver fixes one; one it cannot is redone on top of the integrated state',
    async () => {
      const env = await getEnv();
      const name = 'conflicts';
      const tasks = {
        '1.1': writes({ 'shared.txt': 'one\n', 'a.txt': 'a\n' }),
        '1.2': writes({ 'shared.txt': 'two\n', 'b.txt': 'b\n' }),
        '2.1': writes({ 'shared2.txt': 'x\n' }),
        '2.2': writes({ 'shared2.txt': 'y\n' }),
      };
      // 1.3 (merged after the first conflict is resolved) switches the resolver to failing for milestone 2:
      // the resolver reads its script from the integration worktree.
      const failing = JSON.stringify({ tasks, resolver: { mode: 'fail' } }, null, 2);
      const script = {
        tasks: { ...tasks, '1.3': writes({ '.saga/demo-script.json': failing }) },
        resolver: { mode: 'union' },
      };
      const { repo, planFile } = createFleetRepo(env.tmp(name), {
        script,
        plan: plan(name, [
          milestone(1, 'grep -qx one shared.txt && grep -qx two shared.txt', [
            planTask(1, 'one', ['a.txt'], 'test -f a.txt'),
            planTask(2, 'two', ['b.txt'], 'test -f b.txt'),
            planTask(3, 'switch', ['.saga/demo-script.json'], 'test -f .saga/demo-script.json'),
          ]),
          milestone(2, 'test "$(cat shared2.txt)" = y', [
            planTask(1, 'ex', ['x.txt'], 'test -f shared2.txt'),
            planTask(2, 'why', ['y.txt'], 'test -f shared2.txt'),
          ]),
        ]),
      });
      await startApprovedSaga(env, { repo, planFile, name, args: '--subagents --parallel=2 Conflicts' });
      const done = await finish(env, name, repo);
      const tasksById = byId(done);
      const log = done.log.join('\n');

      // Milestone 1: the resolver kept both sides.
      expect(log).toMatch(/Merge conflict integrating 1\.2: shared\.txt; asking the resolver/);
      expect(log).toMatch(/Resolver fixed the conflict of 1\.2/);
      expect(tasksById.get('1.2')!.delegations).toBe(1);

      // Milestone 2: the resolver gave up; the milestone went back to its pre-integration commit and 2.2 was
      // redone on top of the integrated state (2.1 merged), its old tip archived.
      expect(log).toMatch(/Resolver could not fix 2\.2/);
      const reverted =
        /Milestone 2 reverted to ([0-9a-f]{10}); re-delegating 2\.2 on top of ([0-9a-f]{10})/.exec(log);
      expect(reverted).not.toBeNull();
      const m1Commit = done.milestones[0]!.integrationCommit!;
      expect(m1Commit.startsWith(reverted![1]!)).toBe(true);
      const t21 = tasksById.get('2.1')!;
      const t22 = tasksById.get('2.2')!;
      expect([t21.delegations, t22.delegations]).toEqual([1, 2]);
      expect([t21.status, t22.status]).toEqual(['integrated', 'integrated']);
      const archived = git(repo, 'rev-parse', `refs/saga-archive/${name}/m2t2-d2`);
      expect(git(repo, 'show', `${archived}:shared2.txt`)).toBe('y');
      expect(() => git(repo, 'merge-base', '--is-ancestor', archived, t22.commit!)).toThrow();
      // The redone branch starts from the integrated state: it contains 2.1's work.
      expect(() => git(repo, 'merge-base', '--is-ancestor', t21.commit!, t22.commit!)).not.toThrow();
      const integration = `saga/${name}/integration`;
      expect(git(repo, 'show', `${integration}:shared.txt`)).toBe('one\ntwo');
      expect(git(repo, 'show', `${integration}:shared2.txt`)).toBe('y');
      for (const t of tasksById.values())
        expect(() => git(repo, 'merge-base', '--is-ancestor', t.commit!, integration)).not.toThrow();
      expect(done.milestones.map((m) => m.status)).toEqual(['integrated', 'integrated']);
    },
    200_000,
  );

  test.concurrent(
    'a milestone validation failure reverts and re-delegates with the failure output, then passes',
    async () => {
      const env = await getEnv();
      const name = 'revalidate';
      const { repo, planFile } = createFleetRepo(env.tmp(name), {
        // 1.1's first version passes its own check but not the milestone's; the next delegation fixes it.
        script: {
          tasks: {
            '1.1': { attempts: [{ files: { 'v.txt': 'bad\n' } }, { files: { 'v.txt': 'good\n' } }] },
            '1.2': writes({ 'w.txt': 'w\n' }),
          },
        },
        plan: plan(name, [
          milestone(1, 'grep -qx good v.txt', [
            planTask(1, 'vee', ['v.txt'], 'test -f v.txt'),
            planTask(2, 'dub', ['w.txt'], 'test -f w.txt'),
          ]),
        ]),
      });
      const input = await startApprovedSaga(env, {
        repo,
        planFile,
        name,
        args: '--subagents --parallel=2 Revalidate',
      });
      const done = await finish(env, name, repo);
      const log = done.log.join('\n');
      const base = git(repo, 'rev-parse', 'main');
      // The check's command names v.txt, which 1.1 owns: only 1.1 is redone.
      expect(log).toContain(
        `Integration: milestone 1 validation 'grep -qx good v.txt' failed; reverted to ${base.slice(0, 10)}; re-delegating 1.1 (owns v.txt, named in the command 'grep -qx good v.txt')`,
      );
      expect(byId(done).get('1.2')).toMatchObject({ status: 'integrated', delegations: 1 });
      expect(log).toMatch(/Milestone 1 integrated .*validation passed/);
      const t11 = byId(done).get('1.1')!;
      expect(t11).toMatchObject({ status: 'integrated', delegations: 2, attempts: 2 });
      // The second delegation was told why, with the failing check's output attached.
      const prompt = readFileSync(path.join(input.sagaDir, 'runs', 'm1t1-d2-a2', 'prompt.md'), 'utf8');
      expect(prompt).toMatch(/Milestone 1 validation failed after integration: milestone 1 check/);
      expect(prompt).toMatch(/### .*runs\/m1-r1-validation\/check-1\.log[\s\S]*\$ grep -qx good v\.txt/);
      expect(git(repo, 'show', `saga/${name}/integration:v.txt`)).toBe('good');
    },
    200_000,
  );

  test.concurrent(
    'crashing tasks escalate after a re-delegation and a spec adjustment; retry with a note and skip, while the rest runs on',
    async () => {
      const env = await getEnv();
      const name = 'escalate';
      const fail = { exit: 1 };
      const { repo, planFile } = createFleetRepo(env.tmp(name), {
        script: {
          tasks: {
            // Attempts 1-3 (first delegation) and 4-6 (re-delegation) fail; the planner finds nothing to adjust
            // (its plan has no such task); the retry's attempt 7 passes.
            '1.1': { attempts: [fail, fail, fail, fail, fail, fail, { files: { 'e1.txt': 'ok\n' } }] },
            '1.2': writes({ 'e2.txt': 'ok\n' }, { sleep_ms: 1500 }),
            '1.3': writes({ 'e3.txt': 'ok\n' }),
            '1.4': { attempts: [fail] },
          },
        },
        plan: plan(name, [
          milestone(1, 'test -f e1.txt && test -f e2.txt && test -f e3.txt', [
            planTask(1, 'stubborn', ['e1.txt'], 'test -f e1.txt'),
            planTask(2, 'steady', ['e2.txt'], 'test -f e2.txt'),
            planTask(3, 'quick', ['e3.txt'], 'test -f e3.txt'),
            planTask(4, 'hopeless', ['e4.txt'], 'test -f e4.txt'),
          ]),
        ]),
      });
      const input = await startApprovedSaga(env, {
        repo,
        planFile,
        name,
        args: '--subagents --parallel=2 Escalate',
      });

      const asked = await waitForStatus(
        env,
        name,
        (s) => ['esc-m1t1-d3', 'esc-m1t4-d3'].every((id) => s.pending.some((p) => p.id === id)),
        150_000,
      );
      const esc = asked.pending.find((p) => p.id === 'esc-m1t1-d3')!;
      expect(esc).toMatchObject({ kind: 'escalation', options: ['retry', 'skip', 'edit', 'abort'] });
      expect(esc.prompt).toMatch(
        /still blocked after re-delegation and a spec adjustment: .*agent exited with 1/,
      );
      // The rest of the milestone ran on meanwhile.
      expect(byId(asked).get('1.2')!.status).toBe('passed');
      expect(byId(asked).get('1.3')!.status).toBe('passed');
      expect(byId(asked).get('1.1')).toMatchObject({ status: 'blocked', delegations: 3, attempts: 6 });

      await answer(env, name, 'esc-m1t4-d3', 'skip');
      const afterSkip = await waitForStatus(env, name, (s) => byId(s).get('1.4')!.status === 'skipped');
      expect(afterSkip.pending.map((p) => p.id)).toContain('esc-m1t1-d3');
      await answer(env, name, 'esc-m1t1-d3', 'retry', 'Write e1.txt and nothing else.');

      const done = await finish(env, name, repo);
      const tasks = byId(done);
      expect(tasks.get('1.1')).toMatchObject({ status: 'integrated', delegations: 4, attempts: 7 });
      expect(tasks.get('1.4')!.status).toBe('skipped');
      expect([tasks.get('1.2')!.status, tasks.get('1.3')!.status]).toEqual(['integrated', 'integrated']);
      // The note reached the agent of the retry.
      const prompt = readFileSync(path.join(input.sagaDir, 'runs', 'm1t1-d4-a7', 'prompt.md'), 'utf8');
      expect(prompt).toContain('Write e1.txt and nothing else.');
      expect(git(repo, 'ls-tree', '--name-only', `saga/${name}/integration`).split('\n')).toEqual(
        expect.arrayContaining(['e1.txt', 'e2.txt', 'e3.txt']),
      );
    },
    200_000,
  );

  test.concurrent(
    'a crossed saga budget starts no new agent run and asks; raising it lets the saga finish',
    async () => {
      const env = await getEnv();
      const name = 'budget';
      const cost = { usage: { input_tokens: 100, output_tokens: 10, cost_usd: 0.01 } };
      const { repo, planFile } = createFleetRepo(env.tmp(name), {
        config: 'budget:\n  saga_usd: 0.015\n',
        script: {
          tasks: {
            '1.1': writes({ 'b1.txt': '1\n' }, cost),
            '1.2': writes({ 'b2.txt': '2\n' }, cost),
            '1.3': writes({ 'b3.txt': '3\n' }, cost),
          },
        },
        plan: plan(name, [
          milestone(1, 'test -f b3.txt', [
            planTask(1, 'one', ['b1.txt'], 'test -f b1.txt'),
            planTask(2, 'two', ['b2.txt'], 'test -f b2.txt'),
            planTask(3, 'three', ['b3.txt'], 'test -f b3.txt'),
          ]),
        ]),
      });
      // Sequential (no --parallel): 1.1 then 1.2 cross the budget before 1.3 can start.
      await startApprovedSaga(env, { repo, planFile, name, args: 'Budget' });
      const asked = await waitForPending(env, name, /^budget-/, 150_000);
      const question = asked.pending.find((p) => p.kind === 'budget')!;
      expect(question.prompt).toMatch(/spent \$0\.02, over its budget of \$0\.015/);
      expect(question.options).toEqual(['raise', 'stop']);
      // Asked as soon as 1.2's run crossed the budget; 1.2 still finishes (its checks pass).
      const settled = await waitForStatus(env, name, (s) => byId(s).get('1.2')!.status === 'passed');
      const tasks = byId(settled);
      expect([tasks.get('1.1')!.status, tasks.get('1.2')!.status, tasks.get('1.3')!.status]).toEqual([
        'passed',
        'passed',
        'pending',
      ]);
      expect(settled.usage!.costUsd).toBeCloseTo(0.02, 5);
      expect(renderStatus(settled)).toMatch(/Milestone 1 Milestone 1: running, 2\/3 tasks done \(\$0\.02/);
      // A raise needs the new amount.
      await expect(answer(env, name, question.id, 'raise')).rejects.toThrow(/text/i);
      await answer(env, name, question.id, 'raise', '1');
      const done = await finish(env, name, repo);
      expect(byId(done).get('1.3')!.status).toBe('integrated');
      expect(done.usage!.costUsd).toBeCloseTo(0.03, 5);
    },
    200_000,
  );
});
