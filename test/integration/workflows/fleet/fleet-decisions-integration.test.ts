/**
 * The fleet's decisions around a milestone's integration and around checks that cannot run, in seconds:
 * the implementation workflow and its task children on Temporal's time-skipping test server with stand-in
 * activities (test/harness/fleet-stand-ins.ts) under a stand-in saga (test/harness/workflows/fleet-parent.ts).
 * The real-server tests (milestone-redelegation.test.ts, unrunnable-checks.test.ts, budget-holds.test.ts)
 * take the same paths end to end.
 */
import { inputsOf } from '../../../harness/fleet-stand-ins';
import {
  createFleetTestEnv,
  fleetPlan,
  loggedLines,
  runFleet,
  type FleetTestEnv,
} from '../../../harness/fleet-run';

describe('fleet decisions at integration, on checks that cannot run and at the saga budget (time-skipping test server)', () => {
  let fx: FleetTestEnv;
  beforeAll(async () => {
    fx = await createFleetTestEnv();
  }, 120_000);
  afterAll(async () => fx?.env.teardown());

  const twoTasks = () =>
    fleetPlan([
      { id: 1, owns: ['src/a.ts'] },
      { id: 2, owns: ['src/b.ts'] },
    ]);
  const failingB = { fail: 'FAIL src/b.ts\n  expected 2, received 3' };

  test('a failed milestone validation blames the task whose file it names; only that one is sent back', async () => {
    const run = await runFleet(fx, {
      plan: twoTasks(),
      script: { attempts: {}, integrations: [failingB, 'pass'] },
    });
    const { result, calls } = run;
    expect(result.outcome).toBe('integrated');
    const attempts = inputsOf(calls, 'runTaskAttempt');
    const labels = attempts.map((a) => a.agent.runLabel);
    // The two tasks run side by side (their calls in either order); then 1.2 alone is redone.
    expect(labels.slice(0, 2).sort()).toEqual(['m1t1-d1-a1', 'm1t2-d1-a1']);
    expect(labels.slice(2)).toEqual(['m1t2-d2-a2']);
    const redo = attempts[2]!;
    expect(redo.agent.context?.notes).toEqual([
      "Milestone 1 validation failed after integration: the milestone tests pass (`npm test`). It points at this task: owns src/b.ts, named in the output of 'npm test'.",
      'Output of `npm test` (exit 1), last lines:\nFAIL src/b.ts\n  expected 2, received 3',
    ]);
    expect(redo.agent.attachments).toEqual(['/runs/m1-r1-validation/check-1.txt']);
    // The failed integration is reverted to where it started; the second merges both branches again.
    expect(inputsOf(calls, 'resetHard').map((r) => r.commit)).toEqual(['pre-integration-1']);
    const branchOf = (ref: string) => attempts.find((a) => a.agent.taskId === ref)!.handoff.branch;
    const branches = [branchOf('1.1'), branchOf('1.2')];
    expect(inputsOf(calls, 'mergeBranches').map((m) => m.merges.map((x) => x.branch))).toEqual([
      branches,
      branches,
    ]);
    expect(calls.map((c) => c.name).slice(2)).toEqual([
      'prepareWorktree',
      'mergeBranches',
      'runChecks',
      'resetHard',
      'removeWorktree',
      'runTaskAttempt',
      'prepareWorktree',
      'mergeBranches',
      'runChecks',
      'headCommit',
      'removeWorktree',
      'recordMilestone',
    ]);
    expect(loggedLines(run)).toContain(
      "Integration: milestone 1 validation 'npm test' failed; reverted to pre-integr; re-delegating 1.2 (owns src/b.ts, named in the output of 'npm test')",
    );
  });

  test('a merge conflict the resolver cannot fix: reverted, the task redone on top of what merged', async () => {
    const run = await runFleet(fx, { plan: twoTasks(), script: { attempts: {}, conflictsOnce: '1.2' } });
    const { result, calls } = run;
    expect(result.outcome).toBe('integrated');
    const [resolver] = inputsOf(calls, 'runRoleAgent');
    expect(resolver).toMatchObject({ role: 'resolver', taskId: '1.2' });
    expect(calls.map((c) => c.name).slice(2, 11)).toEqual([
      'prepareWorktree',
      'mergeBranches',
      'runRoleAgent',
      'completeMerge',
      'abortMerge',
      'headCommit',
      'resetHard',
      'removeWorktree',
      'resetTaskBranch',
    ]);
    // 1.2's branch is moved to the state that merged cleanly (1.1's), its old tip archived, and redone.
    const [moved] = inputsOf(calls, 'resetTaskBranch');
    expect(moved).toMatchObject({ to: 'integrated-1', archiveRef: expect.stringContaining('m1t2-d2') });
    const redo = inputsOf(calls, 'runTaskAttempt')[2]!;
    expect(redo.agent.runLabel).toBe('m1t2-d2-a2');
    expect(redo.agent.context?.notes).toEqual([
      'Your branch conflicted with the integration branch in src/shared.ts; redo the task on top of the integrated state.',
    ]);
    expect(inputsOf(calls, 'resetHard').map((r) => r.commit)).toEqual(['pre-integration-1']);
  });

  test('a third failed integration in a row asks the user (esc-m1-integration-r1-3); retry carries the note', async () => {
    const { result, calls, view } = await runFleet(fx, {
      plan: twoTasks(),
      script: { attempts: {}, integrations: [failingB, failingB, failingB, 'pass'] },
      drive: async (saga) => {
        await saga.question('esc-m1-integration-r1-3');
        await saga.respond('esc-m1-integration-r1-3', 'retry', 'Compare with src/a.ts');
      },
    });
    expect(result.outcome).toBe('integrated');
    expect(view.opened.map((i) => i.id)).toEqual(['esc-m1-integration-r1-3']);
    const redone = inputsOf(calls, 'runTaskAttempt').filter((a) => a.agent.taskId === '1.2');
    expect(redone.map((a) => a.agent.runLabel)).toEqual([
      'm1t2-d1-a1',
      'm1t2-d2-a2',
      'm1t2-d3-a3',
      'm1t2-d4-a4',
    ]);
    expect(redone[3]!.agent.context?.notes).toContain('Compare with src/a.ts');
    expect(redone[2]!.agent.context?.notes).not.toContain('Compare with src/a.ts');
    // Each failure named src/b.ts alone: task 1.1 stayed passed and was merged again as it was.
    expect(inputsOf(calls, 'runTaskAttempt').filter((a) => a.agent.taskId === '1.1')).toHaveLength(1);
    expect(inputsOf(calls, 'runChecks')).toHaveLength(4);
  });

  test("a task's check that cannot run (exit 127) stops it after one attempt and is asked once", async () => {
    const { result, calls, view } = await runFleet(fx, {
      plan: fleetPlan([{ id: 1, owns: ['src/a.ts'] }]),
      attempts: 3,
      script: { attempts: { '1.1': ['unrunnable', 'pass'] } },
      drive: async (saga) => {
        const asked = await saga.question('check-m1t1-d1-c1');
        expect(asked.kind).toBe('question');
        await saga.respond('check-m1t1-d1-c1', 'new check', 'node -e 0');
      },
    });
    expect(result.outcome).toBe('integrated');
    expect(view.opened.map((i) => i.id)).toEqual(['check-m1t1-d1-c1']);
    // One attempt of three, handed off at once; no planner run for a missing program.
    const attempts = inputsOf(calls, 'runTaskAttempt');
    expect(attempts.map((a) => a.agent.runLabel)).toEqual(['m1t1-d1-a1', 'm1t1-d2-a2']);
    expect(calls.map((c) => c.name).slice(0, 4)).toEqual([
      'runTaskAttempt',
      'handoffTask',
      'prependDecision',
      'runTaskAttempt',
    ]);
    expect(inputsOf(calls, 'prependDecision')[0]!.entry.title).toMatch(/^Deviation: task 1\.1 spec changed/);
    expect(inputsOf(calls, 'runRoleAgent')).toEqual([]);
    expect(attempts[1]!.checks.checks).toEqual([{ text: 'task 1 check', check: 'node -e 0' }]);
    expect(attempts[1]!.agent.context?.notes).toEqual([
      "Your task's checks were changed after they could not run here: check `node check-1.js` replaced by `node -e 0` (the check could not run here)",
    ]);
  });

  test('a milestone check that cannot run is asked (check-m1-r1-i1-c1); no task is sent back', async () => {
    const { result, calls, view } = await runFleet(fx, {
      plan: twoTasks(),
      script: { attempts: {}, integrations: ['unrunnable', 'pass'] },
      drive: async (saga) => {
        await saga.question('check-m1-r1-i1-c1');
        await saga.respond('check-m1-r1-i1-c1', 'new check', 'node -e 0');
      },
    });
    expect(result.outcome).toBe('integrated');
    expect(view.opened.map((i) => i.id)).toEqual(['check-m1-r1-i1-c1']);
    expect(inputsOf(calls, 'runTaskAttempt')).toHaveLength(2);
    expect(inputsOf(calls, 'runChecks').map((c) => c.checks)).toEqual([
      [{ text: 'the milestone tests pass', check: 'npm test' }],
      [{ text: 'the milestone tests pass', check: 'node -e 0' }],
    ]);
  });

  describe('the saga budget spent: no new task starts until the user answers', () => {
    // Every stand-in agent run costs $0.01: task 1.1 spends the whole budget; 1.2 waits for it.
    const chained = () =>
      fleetPlan([
        { id: 1, owns: ['src/a.ts'] },
        { id: 2, owns: ['src/b.ts'], dependsOn: ['1.1'] },
      ]);
    const QUESTION = 'budget-r1-1-of-1-q1';

    test('raised: the waiting task starts, under the new limit', async () => {
      let beforeAnswer: string[] = [];
      const { result, calls, view } = await runFleet(fx, {
        plan: chained(),
        budgetUsd: 0.01,
        script: { attempts: {} },
        drive: async (saga) => {
          const asked = await saga.question(QUESTION);
          expect(asked.kind).toBe('budget');
          beforeAnswer = inputsOf(saga.calls, 'runTaskAttempt').map((a) => a.agent.runLabel);
          await saga.respond(QUESTION, 'raise', '+1');
        },
      });
      expect(result.outcome).toBe('integrated');
      expect(beforeAnswer).toEqual(['m1t1-d1-a1']);
      expect(view.opened.map((i) => i.id)).toEqual([QUESTION]);
      const second = inputsOf(calls, 'runTaskAttempt')[1]!;
      expect(second.agent.runLabel).toBe('m1t2-d1-a1');
      expect(second.agent.maxBudgetUsd).toBeCloseTo(1);
    });

    test('stopped: the phase ends aborted and the waiting task never runs', async () => {
      const { result, calls } = await runFleet(fx, {
        plan: chained(),
        budgetUsd: 0.01,
        script: { attempts: {} },
        drive: async (saga) => {
          await saga.question(QUESTION);
          await saga.respond(QUESTION, 'stop');
        },
      });
      expect(result.outcome).toBe('aborted');
      expect(inputsOf(calls, 'runTaskAttempt').map((a) => a.agent.runLabel)).toEqual(['m1t1-d1-a1']);
      expect(inputsOf(calls, 'prepareWorktree')).toEqual([]);
    });
  });
});
