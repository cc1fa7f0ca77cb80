/**
 * Task checks that cannot run (exit 126/127), against the real server, real git and the demo agent: the
 * task stops after ONE agent attempt and the user is asked about each such check at once (no more paid
 * attempts, no planner run), with `new check` / `verify by hand` / `drop`; each answer does what it says.
 * Before that, plan approval already names them (their program is missing here).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { oneTaskPlan, startModesSaga } from '../../../harness/modes-helpers';

type TaskShape = { validation: { text: string; check: string }[] } & Record<string, unknown>;

function planWithUnrunnableChecks(): Record<string, unknown> {
  const plan = oneTaskPlan() as { milestones: { tasks: TaskShape[] }[] } & Record<string, unknown>;
  const task = plan.milestones[0]!.tasks[0]!;
  task.validation = [
    ...task.validation,
    { text: 'kiosk replay passes', check: 'no-such-kiosk-tool --replay' },
    { text: 'the screen reader reads it', check: 'no-such-reader-tool' },
    { text: 'the linter is happy', check: 'no-such-lint-tool src' },
  ];
  const criteria = plan.exit_criteria as Record<string, unknown>[];
  criteria[0]!.manual = ["Run `node -p \"require('./src/greet')('Ada')\"`", 'It prints Hello, Ada!'];
  criteria.push({
    id: 'E2',
    text: 'Works on the kiosk',
    check: 'no-such-kiosk-tool --verify',
    manual: ['Open the kiosk app', 'The greeting shows on its screen'],
  });
  return plan;
}

describe('task checks that cannot run', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('unrunnable');
  });
  afterAll(async () => env.close());

  test('a 127 escalates after one attempt; new check, verify by hand and drop each do what they say', async () => {
    const saga = await startModesSaga(env, {
      name: 'unrunnable',
      args: 'Add a greeting',
      plan: planWithUnrunnableChecks(),
    });
    // Found before any agent runs: the approval question names each check whose program is missing here.
    const approval = (await waitForPending(env, saga.name, 'plan-approval-1')).pending[0]!.prompt;
    expect(approval).toContain('Warning: 4 checks cannot run here (their program is missing)');
    expect(approval).toContain(
      '- exit criterion E2: `no-such-kiosk-tool --verify`: no-such-kiosk-tool is not on the PATH',
    );
    expect(approval).toContain(
      '- task 1.1: `no-such-kiosk-tool --replay`: no-such-kiosk-tool is not on the PATH checks run with',
    );
    expect(approval).toContain('- task 1.1: `no-such-lint-tool src`: no-such-lint-tool is not on the PATH');
    expect(approval).not.toContain('`node --test');
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(0);
    await saga.answer('plan-approval-1', 'approve');

    const asked = await waitForPending(env, saga.name, /^(check-|esc-|gap-|acceptance-)/, 150_000);
    const implementerRuns = () => saga.runs().filter((r) => r.role === 'implementer');
    // One paid attempt, then the user: no second attempt, no re-delegation, no planner adjustment.
    expect(implementerRuns()).toHaveLength(1);
    expect(saga.runs().filter((r) => r.role === 'planner' && r.stage !== 'plan')).toHaveLength(0);
    expect(asked.pending.map((p) => p.id)).toEqual([
      'check-m1t1-d1-c1',
      'check-m1t1-d1-c2',
      'check-m1t1-d1-c3',
    ]);
    for (const q of asked.pending)
      expect(q).toMatchObject({ options: ['new check', 'verify by hand', 'drop'], recommended: 0 });
    expect(asked.pending[0]!.prompt).toContain(
      'Task 1.1 (Add greet()): its check "kiosk replay passes" (`no-such-kiosk-tool --replay`) cannot run here: the command is not found (exit 127).',
    );
    // `new check` takes a command that is validated before it enters history.
    await expect(saga.answer('check-m1t1-d1-c1', 'new check', 'test -f "src/greet.js')).rejects.toThrow();

    await saga.answer('check-m1t1-d1-c1', 'new check', 'test -f src/greet.js');
    await saga.answer('check-m1t1-d1-c2', 'verify by hand');
    await saga.answer('check-m1t1-d1-c3', 'drop');

    // The exit criterion that cannot run is asked at once too; the user verifies it by hand.
    const final = await waitForPending(env, saga.name, /^(check-|esc-|unachievable-|acceptance-)/, 150_000);
    expect(final.pending.map((p) => p.id)).toEqual(['unachievable-r1-e2']);
    await saga.answer('unachievable-r1-e2', 'verify by hand');

    const accepting = await waitForPending(env, saga.name, /^(check-|esc-|acceptance-)/, 150_000);
    expect(accepting.pending.map((p) => p.id)).toEqual(['acceptance-1']);
    expect(implementerRuns()).toHaveLength(2);
    // The second delegation ran the greet test and the new check; the by-hand and dropped ones not at all.
    const checksDir = path.join(saga.sagaDir, 'runs', 'm1t1-d2-a2-checks');
    expect(readFileSync(path.join(checksDir, 'check-1.log'), 'utf8')).toMatch(
      /^\$ node --test test\/greet.test.js/,
    );
    expect(readFileSync(path.join(checksDir, 'check-2.log'), 'utf8')).toMatch(/^\$ test -f src\/greet.js/);
    expect(existsSync(path.join(checksDir, 'check-3.log'))).toBe(false);

    // The change is a deviation: logged, and written to decisions.md.
    const change =
      'check `no-such-kiosk-tool --replay` replaced by `test -f src/greet.js`; check `no-such-reader-tool` ' +
      '(the screen reader reads it) to be verified by hand at acceptance; check `no-such-lint-tool src` ' +
      'dropped (the checks could not run here)';
    const deviation = saga.decisions().find((d) => d.title.startsWith('Deviation: task 1.1 spec changed'));
    expect(deviation?.title).toContain(change);
    const status = await waitForStatus(env, saga.name, (s) => s.log.some((l) => l.includes(change)));
    expect(status.log.join('\n')).toContain('`no-such-kiosk-tool --replay`, `no-such-reader-tool`');

    // Verified by hand is not a failure: accepting is recommended, and confirms it.
    const acceptance = accepting.pending[0]!;
    expect(acceptance.prompt).toContain('(exit criteria: E1 passed, E2 by-hand)');
    expect(acceptance.prompt).toContain(
      'Verify by hand before you accept: E2 "Works on the kiosk" (the steps are in the report\'s Manual verification).',
    );
    // The task check left to verify by hand is named there too (its task left the carried state when integrated).
    expect(acceptance.prompt).toContain(
      "Task checks to verify by hand before you accept (they could not run here; REPORT.md's Manual " +
        'verification has a step for each, and accepting confirms them): task 1.1: "the screen reader reads it" ' +
        '(no-such-reader-tool).',
    );
    expect(acceptance.recommended).toBe(0);
    const reportFile = path.join(saga.sagaDir, 'REPORT.md');
    const before = readFileSync(reportFile, 'utf8');
    expect(before).toContain('**Exit criteria passed:** 1 of 2, 1 to verify by hand');
    expect(before).toContain(
      'E2 — Works on the kiosk: Open the kiosk app; The greeting shows on its screen (its check ' +
        '`no-such-kiosk-tool --verify` cannot run here',
    );
    expect(before).toContain('E1 — greet() returns the greeting: Run `node -p');
    expect(before).toMatch(/\| \*\*passed\*\* \| .* \| # pass \d+, # fail 0 \|/);
    expect(before).toContain('| **by-hand** | to verify by hand at acceptance |');
    expect(before).toContain(
      'Task 1.1 — the screen reader reads it: check by hand that it holds (its check `no-such-reader-tool` cannot run here).',
    );

    await saga.answer('acceptance-1', 'accept');
    const done = await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
    expect(done.exitResults?.map((r) => r.result)).toEqual(['passed', 'verified-by-user']);
    const after = readFileSync(reportFile, 'utf8');
    expect(after).toContain('**Exit criteria passed:** 1 of 2, 1 verified by the user');
    expect(after).toContain('Verified by the user: verified by hand by tester at acceptance.');
  }, 400_000);

  test("a milestone check exiting 127 is asked at once, no task is redone, and the answer is the milestone's check", async () => {
    const plan = oneTaskPlan() as { milestones: { validation: unknown[] }[] } & Record<string, unknown>;
    plan.milestones[0]!.validation = [
      ...plan.milestones[0]!.validation,
      { text: 'the docs build', check: 'no-such-docs-tool build' },
    ];
    const saga = await startModesSaga(env, { name: 'unrunnable-milestone', args: 'Add a greeting', plan });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');

    const asked = await waitForPending(env, saga.name, /^(check-|esc-|acceptance-)/, 150_000);
    expect(asked.pending.map((p) => p.id)).toEqual(['check-m1-r1-i1-c1']);
    expect(asked.pending[0]).toMatchObject({ options: ['new check', 'verify by hand', 'drop'] });
    expect(asked.pending[0]!.prompt).toContain(
      'Milestone 1 (Core library) validation: its check "the docs build" (`no-such-docs-tool build`) cannot run here: the command is not found (exit 127).',
    );
    await saga.answer('check-m1-r1-i1-c1', 'new check', 'test -f src/greet.js');

    const accepting = await waitForPending(env, saga.name, /^(check-|esc-|acceptance-)/, 150_000);
    expect(accepting.pending.map((p) => p.id)).toEqual(['acceptance-1']);
    // The task was not redone for a check no task can fix; the milestone was integrated with the new check.
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(1);
    const title =
      'Deviation: milestone 1 validation changed: check `no-such-docs-tool build` replaced by `test -f src/greet.js` ' +
      '(the check could not run here) (answered by tester)';
    expect(saga.decisions().map((d) => d.title)).toContain(title);
    const runs = path.join(saga.sagaDir, 'runs');
    const [validation] = readdirSync(runs).filter((d) => d.endsWith('-validation'));
    expect(readFileSync(path.join(runs, validation!, 'check-2.log'), 'utf8')).toMatch(
      /^\$ test -f src\/greet.js/,
    );
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  }, 400_000);
});
