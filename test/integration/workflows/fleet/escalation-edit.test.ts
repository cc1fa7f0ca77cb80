/**
 * Answers that change what decides a task: an escalation's `edit` sets the task's checks (refused when it
 * does not parse, and nothing changes); a planner adjustment of the checks under --autonomous is applied,
 * cited in decisions.md and manifest.md and listed at acceptance; an agent that hangs or crashes through
 * two delegations takes the adjustment path like failed checks do. Real server, real git, the demo agent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { taskSpecPath } from '../../../../src/domain/record/render';
import { EDIT_CHECK_TEXT } from '../../../../src/domain/fleet/spec-edit';
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
const GOOD = greet('`Hello, ${name}!`');
const BUGGY = greet("'Hello ' + name");
const GREET_CHECK = 'node --test test/greet.test.js';
const LOOSE_CHECK = `node -e "require('./src/greet').greet('x')"`;

/** One task checked by `check` (and `interfaces`); milestone and exit checks only need the file. */
function planChecking(check: string, interfaces = 'none'): Record<string, unknown> {
  const plan = oneTaskPlan() as { milestones: { tasks: Record<string, unknown>[] }[] } & Record<
    string,
    unknown
  >;
  const milestone = plan.milestones[0]!;
  const task = { ...milestone.tasks[0]!, interfaces, validation: [{ text: 'greet check passes', check }] };
  return {
    ...plan,
    exit_criteria: [{ id: 'E1', text: 'greet() exists', check: `node -e "require('./src/greet')"` }],
    milestones: [{ ...milestone, validation: [], tasks: [task] }],
  };
}

const taskInPrompt = (saga: ModesSaga, label: string) =>
  runContext(saga.sagaDir, label).task as {
    validation?: unknown;
    interfaces?: string;
    spec_changes?: string[];
  };

const specFileOf = (saga: ModesSaga) =>
  path.join(saga.sagaDir, taskSpecPath({ id: 1, slug: 'core' }, { id: 1, slug: 'add-greet' }));

describe('answers that change what decides a task', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('escalation-edit');
  });
  afterAll(async () => env.close());

  test('an edit answer with a new check replaces the wrong check: the next attempt runs it and passes', async () => {
    const wrong = planChecking('grep -q Bonjour src/greet.js');
    const saga = await startModesSaga(env, {
      name: 'edit-check',
      args: 'Add a greeting',
      plan: wrong,
      script: { tasks: { '1.1': { attempts: [GOOD] } }, planner: { revise: wrong } },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    const asked = await waitForPending(env, saga.name, 'esc-m1t1-d3', 150_000);
    expect(asked.pending.find((p) => p.id === 'esc-m1t1-d3')!.prompt).toContain("a line 'check: COMMAND'");

    // A check the shell cannot parse is refused before it enters history; the question stays open.
    await expect(saga.answer('esc-m1t1-d3', 'edit', 'check: grep -q "Hello src/greet.js')).rejects.toThrow(
      /Edit line 1: the check `grep -q "Hello src\/greet.js` has an unclosed double quote/,
    );
    await saga.answer('esc-m1t1-d3', 'edit', `The check looked for the wrong word.\ncheck: ${GREET_CHECK}`);
    const done = await waitForPending(env, saga.name, 'acceptance-1', 90_000);
    expect(done.milestones[0]!.tasks[0]).toMatchObject({ status: 'integrated', delegations: 4, attempts: 7 });
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(7);
    // The attempt after the edit worked from the new check (it passed on it: the old one could not).
    expect(taskInPrompt(saga, 'm1t1-d4-a7').validation).toEqual([
      { text: EDIT_CHECK_TEXT, check: GREET_CHECK },
    ]);
    await waitForStatus(env, saga.name, () => readFileSync(specFileOf(saga), 'utf8').includes(GREET_CHECK));
    const spec = readFileSync(specFileOf(saga), 'utf8');
    expect(spec).toContain(`${EDIT_CHECK_TEXT} — check: \`${GREET_CHECK}\``);
    expect(spec).not.toContain('grep -q Bonjour');
    expect(done.log.join('\n')).toContain(
      `Deviation: task 1.1 spec changed: The check looked for the wrong word. — validation: \`${GREET_CHECK}\``,
    );
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  });

  test('under --autonomous a planner adjustment of the checks is applied, cited and listed at acceptance', async () => {
    const saga = await startModesSaga(env, {
      name: 'adjust-autonomous',
      args: '--autonomous Add a greeting',
      plan: planChecking(GREET_CHECK),
      script: { tasks: { '1.1': { attempts: [BUGGY] } }, planner: { revise: planChecking(LOOSE_CHECK) } },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    const done = await waitForPending(env, saga.name, 'acceptance-1', 150_000);
    expect(done.milestones[0]!.tasks[0]).toMatchObject({ status: 'integrated', delegations: 3, attempts: 7 });
    expect(done.pending.map((p) => p.id)).toEqual(['acceptance-1']);
    const prompt = done.pending[0]!.prompt;
    expect(prompt).toContain('Decided under --autonomous without asking');
    expect(prompt).toContain(
      `task 1.1: validation: \`${LOOSE_CHECK}\` (spec adjusted by planner (--autonomous)`,
    );
    // REPORT.md lists it too, for the record the user keeps.
    const report = readFileSync(path.join(saga.sagaDir, 'REPORT.md'), 'utf8');
    expect(report).toContain('## Decided under --autonomous without asking');
    expect(report).toContain(`- task 1.1: validation: \`${LOOSE_CHECK}\``);
    const entry = saga
      .decisions()
      .find((d) => d.title === 'Autonomous decision: task 1.1 spec adjusted without asking');
    expect(entry?.lines).toEqual([
      `- Change: validation: \`${LOOSE_CHECK}\``,
      expect.stringMatching(
        /^- Reason: task 1\.1 \(.+\) stayed blocked in 2 delegations: Check failed: greet check passes/,
      ),
      "- Decided by: --autonomous (a change of checks or scope is otherwise the user's to approve).",
      '- Override: report an issue at acceptance with the check you want, or run without --autonomous.',
    ]);
    expect(saga.manifest().auto_picked_checkpoints).toEqual([
      expect.objectContaining({
        phase: 'implementation',
        checkpoint: 'task-1.1-spec-adjustment-d3',
        decision: 'approve',
        flag_sources: { autonomous: 'flag' },
      }),
    ]);
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  });

  test("a planner adjustment of the checks answered edit: the user's own check replaces the planner's", async () => {
    const saga = await startModesSaga(env, {
      name: 'adjust-edited',
      args: 'Add a greeting',
      plan: planChecking(GREET_CHECK),
      script: { tasks: { '1.1': { attempts: [BUGGY] } }, planner: { revise: planChecking(LOOSE_CHECK) } },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    await waitForPending(env, saga.name, 'adj-m1t1-d3', 150_000);
    await expect(saga.answer('adj-m1t1-d3', 'edit', 'owns: src/other.js')).rejects.toThrow(
      /Edit line 1: 'owns' cannot be changed by an edit/,
    );
    const mine = `node -e "require('./src/greet')"`;
    await saga.answer('adj-m1t1-d3', 'edit', `check: ${mine}`);
    const done = await waitForPending(env, saga.name, 'acceptance-1', 90_000);
    expect(done.milestones[0]!.tasks[0]).toMatchObject({ status: 'integrated', delegations: 3, attempts: 7 });
    expect(taskInPrompt(saga, 'm1t1-d3-a7').validation).toEqual([{ text: EDIT_CHECK_TEXT, check: mine }]);
    expect(saga.decisions().find((d) => d.title.includes(`validation: \`${mine}\``))?.lines[0]).toContain(
      "tester edited the spec in place of the planner's adjustment",
    );
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  });

  test('a planner adjustment of the checks answered reject: no agent runs on it and the user is asked about the task', async () => {
    const saga = await startModesSaga(env, {
      name: 'adjust-rejected',
      args: 'Add a greeting',
      plan: planChecking(GREET_CHECK),
      script: { tasks: { '1.1': { attempts: [BUGGY] } }, planner: { revise: planChecking(LOOSE_CHECK) } },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    await waitForPending(env, saga.name, 'adj-m1t1-d3', 150_000);
    await saga.answer('adj-m1t1-d3', 'reject', 'The strict test is the point');
    const asked = await waitForPending(env, saga.name, 'esc-m1t1-d3', 60_000);
    expect(asked.pending.find((p) => p.id === 'esc-m1t1-d3')!.prompt).toContain(
      `tester rejected the planner's adjustment (validation: \`${LOOSE_CHECK}\`): The strict test is the point`,
    );
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(6);
    expect(asked.milestones[0]!.tasks[0]!.specChanges ?? []).toEqual([]);
    await saga.answer('esc-m1t1-d3', 'abort');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled', 60_000);
  });

  test('an agent that hangs, then crashes, through two delegations has its spec adjusted before it is asked about', async () => {
    const hang = { hang: true };
    const crash = { exit: 1 };
    const saga = await startModesSaga(env, {
      name: 'adjust-hangs',
      args: 'Add a greeting',
      plan: planChecking(GREET_CHECK),
      demoProfile: '    idle_timeout: 2s\n',
      script: {
        tasks: { '1.1': { attempts: [hang, hang, hang, crash, crash, crash, GOOD] } },
        // Interfaces only: an adjustment that does not change what decides the task applies without asking.
        planner: { revise: planChecking(GREET_CHECK, 'greet(name) returns "Hello, <name>!"') },
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    const done = await waitForStatus(
      env,
      saga.name,
      (s) => s.pending.some((p) => p.kind === 'acceptance' || p.kind === 'escalation'),
      180_000,
    );
    // On the old path the user was asked after the second delegation (esc-m1t1-d2), no planner run.
    expect(done.pending.map((p) => p.id)).toEqual(['acceptance-1']);
    expect(done.milestones[0]!.tasks[0]).toMatchObject({ status: 'integrated', delegations: 3, attempts: 7 });
    expect(
      saga
        .runs()
        .filter((r) => r.role === 'planner')
        .map((r) => [r.stage, r.taskId]),
    ).toEqual([['revise', '1.1']]);
    const log = done.log.join('\n');
    expect(log).toMatch(/Task 1\.1 blocked \([^\n]*hung/);
    expect(log).toContain('re-delegating with retained context and its spec adjusted');
    expect(taskInPrompt(saga, 'm1t1-d3-a7').interfaces).toBe('greet(name) returns "Hello, <name>!"');
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  });
});
