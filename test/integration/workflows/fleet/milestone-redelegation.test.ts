/**
 * A milestone whose validation fails because of one of its two tasks re-delegates only that task, with the
 * failing check's output in its notes, and says so in an "Integration: " progress line. Real server, real
 * git, the demo agent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createFleetRepo, git, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

jest.setTimeout(200_000);

// The milestone check loads both modules and names the one that is not ready.
const CHECK_SCRIPT = `for (const f of ['src/a.js', 'src/b.js']) {
  if (!require('./' + f).ok) { console.error(f + ': ok is false'); process.exit(1); }
}
console.log('all ok');
`;

describe('milestone validation failure', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('blame');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('re-delegates only the task the failure points at', async () => {
    const name = 'blame-one';
    const { repo, planFile } = createFleetRepo(env.tmp(name), {
      files: { 'check.js': CHECK_SCRIPT },
      script: {
        tasks: {
          '1.1': { attempts: [{ files: { 'src/a.js': 'module.exports = { ok: true };\n' } }] },
          // 1.2's first version passes its own check but not the milestone's; its next delegation fixes it.
          '1.2': {
            attempts: [
              { files: { 'src/b.js': 'module.exports = { ok: false };\n' } },
              { files: { 'src/b.js': 'module.exports = { ok: true };\n' } },
            ],
          },
        },
      },
      plan: {
        name,
        problem: 'Two modules, one of them broken at first.',
        scope: { in: ['src'], out: [], delegated: [] },
        exit_criteria: [{ id: 'E1', text: 'both modules load', check: 'node check.js' }],
        milestones: [
          {
            id: 1,
            slug: 'modules',
            title: 'Modules',
            depends_on: [],
            goal: 'Both modules are ok.',
            validation: [{ text: 'both modules are ok', check: 'node check.js' }],
            tasks: [
              planTask(1, 'module-a', ['src/a.js'], 'test -f src/a.js'),
              planTask(2, 'module-b', ['src/b.js'], 'test -f src/b.js'),
            ],
          },
        ],
      },
    });
    const input = await startApprovedSaga(env, {
      repo,
      planFile,
      name,
      args: '--subagents --parallel=2 Two modules',
    });
    const done = await waitForPending(env, name, 'acceptance-1', 150_000);

    const tasks = new Map(done.milestones[0]!.tasks.map((t) => [t.id, t]));
    expect(tasks.get('1.1')).toMatchObject({ status: 'integrated', delegations: 1 });
    expect(tasks.get('1.2')).toMatchObject({ status: 'integrated', delegations: 2 });
    const base = git(repo, 'rev-parse', 'main').slice(0, 10);
    expect(done.log.map((l) => l.replace(/^\S+ /, ''))).toContain(
      `Integration: milestone 1 validation 'node check.js' failed; reverted to ${base}; re-delegating 1.2 (owns src/b.js, named in the output of 'node check.js')`,
    );
    // The redone delegation was told why it was picked and got the failing output (its context's notes).
    const prompt = readFileSync(path.join(input.sagaDir, 'runs', 'm1t2-d2-a2', 'prompt.md'), 'utf8');
    const context = JSON.parse([...prompt.matchAll(/```json\n([\s\S]*?)\n```/g)].pop()![1]!) as {
      notes: string[];
    };
    expect(context.notes).toEqual([
      "Milestone 1 validation failed after integration: both modules are ok (`node check.js`). It points at this task: owns src/b.js, named in the output of 'node check.js'.",
      'Output of `node check.js` (exit 1), last lines:\nsrc/b.js: ok is false\n',
    ]);
    expect(git(repo, 'show', `saga/${name}/integration:src/b.js`)).toBe('module.exports = { ok: true };');
  });
});
