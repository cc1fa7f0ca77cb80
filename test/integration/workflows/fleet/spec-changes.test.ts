/**
 * Spec changes stick (docs/PROCEDURE.md §3.12: the spec is updated, the deviation recorded, workers always get the current
 * spec): a spec gap's clarification and an `edit` answer reach the task's spec file and the prompt of every
 * later attempt, re-delegations included; the edit is a deviation in the log and in decisions.md.
 * Real server, real git, the demo agent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { taskSpecPath } from '../../../../src/domain/record/render';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { oneTaskPlan, runContext, startModesSaga, type ModesSaga } from '../../../harness/modes-helpers';

const GREET_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;
const greet = (body: string) => ({
  files: {
    'src/greet.js': `module.exports = { greet: (name) => ${body} };\n`,
    'test/greet.test.js': GREET_TEST,
  },
});

describe('spec changes', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('spec-changes');
  });
  afterAll(async () => env.close());

  /** The `task` an attempt's agent was given. */
  const taskInPrompt = (saga: ModesSaga, label: string) =>
    runContext(saga.sagaDir, label).task as { spec_changes?: string[] };

  test('a spec-gap answer and an edit reach the spec file and every later attempt, re-delegations included', async () => {
    const buggy = greet("'Hello ' + name");
    const saga = await startModesSaga(env, {
      name: 'spec-sticks',
      args: 'Add a greeting',
      plan: oneTaskPlan(),
      script: {
        tasks: {
          '1.1': {
            attempts: [
              { report: { status: 'blocked', reason: 'SPEC GAP: which punctuation?' } },
              buggy,
              buggy,
              buggy,
              greet('`Hello, ${name}!`'),
            ],
          },
        },
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');

    await waitForPending(env, saga.name, 'gap-m1t1-d1', 60_000);
    await saga.answer('gap-m1t1-d1', 'answer', 'End with an exclamation mark');
    // Delegation 2 fails its three attempts: the user is asked, and edits the spec.
    await waitForPending(env, saga.name, 'esc-m1t1-d2', 90_000);
    await saga.answer('esc-m1t1-d2', 'edit', 'Use a comma after Hello');
    const done = await waitForPending(env, saga.name, 'acceptance-1', 90_000);
    expect(done.milestones[0]!.tasks[0]).toMatchObject({ status: 'integrated', delegations: 3, attempts: 5 });

    const clarification = expect.stringContaining('which punctuation? — End with an exclamation mark');
    const edit = expect.stringContaining('Use a comma after Hello (spec edited by tester');
    // Every attempt after the answer has the clarification; the re-delegation after the edit has both.
    for (const label of ['m1t1-d2-a2', 'm1t1-d2-a3', 'm1t1-d2-a4'])
      expect(taskInPrompt(saga, label).spec_changes).toEqual([clarification]);
    expect(taskInPrompt(saga, 'm1t1-d3-a5').spec_changes).toEqual([clarification, edit]);
    expect(taskInPrompt(saga, 'm1t1-d1-a1').spec_changes).toBeUndefined();

    // The task's spec file lists both; the edit is a deviation in the log and in decisions.md.
    const specFile = path.join(
      saga.sagaDir,
      taskSpecPath({ id: 1, slug: 'core' }, { id: 1, slug: 'add-greet' }),
    );
    await waitForStatus(env, saga.name, () => readFileSync(specFile, 'utf8').includes('Use a comma'));
    const spec = readFileSync(specFile, 'utf8');
    expect(spec).toContain('## Spec changes since approval');
    expect(spec).toContain('which punctuation? — End with an exclamation mark (spec gap answered by tester');
    expect(spec).toContain('Use a comma after Hello (spec edited by tester');
    expect(
      done.log.some((l) => l.includes(' Deviation: task 1.1 spec changed: Use a comma after Hello')),
    ).toBe(true);
    expect(saga.decisions().map((d) => d.title)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Deviation: task 1\.1 spec changed: Use a comma after Hello/),
      ]),
    );
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  });

  /** One task whose own check is the greeting test; milestone and exit checks only need the file. */
  function adjustablePlan(check: string): Record<string, unknown> {
    const plan = oneTaskPlan() as { milestones: { tasks: Record<string, unknown>[] }[] } & Record<
      string,
      unknown
    >;
    const milestone = plan.milestones[0]!;
    const task = { ...milestone.tasks[0]!, validation: [{ text: 'greet check passes', check }] };
    return {
      ...plan,
      exit_criteria: [{ id: 'E1', text: 'greet() exists', check: `node -e "require('./src/greet')"` }],
      milestones: [{ ...milestone, validation: [], tasks: [task] }],
    };
  }
  const buggyAlways = { attempts: [greet("'Hello ' + name")] };
  const LOOSE_CHECK = `node -e "require('./src/greet').greet('x')"`;

  test('a task blocked twice is re-delegated with its spec adjusted by the planner, and passes on the adjusted checks', async () => {
    const saga = await startModesSaga(env, {
      name: 'spec-adjusted',
      args: 'Add a greeting',
      plan: adjustablePlan('node --test test/greet.test.js'),
      script: { tasks: { '1.1': buggyAlways }, planner: { revise: adjustablePlan(LOOSE_CHECK) } },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    // The adjustment changes the task's check: the user is asked, with the change shown, and approves.
    const asked = await waitForPending(env, saga.name, 'adj-m1t1-d3', 120_000);
    const question = asked.pending.find((p) => p.id === 'adj-m1t1-d3')!;
    expect(question.options).toEqual(['approve', 'edit', 'reject']);
    expect(question.prompt).toContain(
      `The planner proposes to change its checks: validation: \`${LOOSE_CHECK}\``,
    );
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(6);
    await saga.answer('adj-m1t1-d3', 'approve');
    const done = await waitForPending(env, saga.name, 'acceptance-1', 120_000);
    // Two delegations of three failed attempts, then the adjusted one passes at once.
    expect(done.milestones[0]!.tasks[0]).toMatchObject({ status: 'integrated', delegations: 3, attempts: 7 });
    expect(
      saga
        .runs()
        .filter((r) => r.role === 'planner')
        .map((r) => [r.stage, r.taskId]),
    ).toEqual([['revise', '1.1']]);
    const log = done.log.join('\n');
    expect(log).toContain('Task 1.1 blocked (Check failed: greet check passes');
    expect(log).toContain('re-delegating with retained context and its spec adjusted');
    expect(log).toContain(
      `Deviation: task 1.1 spec changed: validation: \`${LOOSE_CHECK}\` (spec adjusted by planner, approved by tester`,
    );
    const task = taskInPrompt(saga, 'm1t1-d3-a7') as {
      validation?: { check: string }[];
      spec_changes?: string[];
    };
    expect(task.validation).toEqual([{ text: 'greet check passes', check: LOOSE_CHECK }]);
    expect(task.spec_changes).toEqual([expect.stringContaining('(spec adjusted by planner')]);
    // The spec file shows the spec as it stands and the change.
    const specFile = path.join(
      saga.sagaDir,
      taskSpecPath({ id: 1, slug: 'core' }, { id: 1, slug: 'add-greet' }),
    );
    await waitForStatus(env, saga.name, () =>
      readFileSync(specFile, 'utf8').includes('Spec changes since approval'),
    );
    expect(readFileSync(specFile, 'utf8')).toContain(`greet check passes — check: \`${LOOSE_CHECK}\``);
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  });

  test('when the planner finds nothing to adjust, the user is asked without another implementer run', async () => {
    const plan = adjustablePlan('node --test test/greet.test.js');
    const saga = await startModesSaga(env, {
      name: 'spec-unadjusted',
      args: 'Add a greeting',
      plan,
      script: { tasks: { '1.1': buggyAlways }, planner: { revise: plan } },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    const asked = await waitForPending(env, saga.name, 'esc-m1t1-d3', 120_000);
    const question = asked.pending.find((p) => p.id === 'esc-m1t1-d3')!;
    expect(question.prompt).toContain('is still blocked after re-delegation and a spec adjustment');
    expect(question.prompt).toContain('the planner found nothing in the spec to adjust');
    expect(asked.milestones[0]!.tasks[0]).toMatchObject({ status: 'blocked', delegations: 3, attempts: 6 });
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(6);
    expect(asked.log.join('\n')).toContain(
      'Task 1.1 did not converge despite re-delegation and spec adjustment',
    );
    await saga.answer('esc-m1t1-d3', 'abort');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled', 60_000);
  });
});
