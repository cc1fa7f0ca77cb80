/**
 * The fleet's decisions about a blocked task, in seconds: the implementation workflow and its task children
 * run on Temporal's time-skipping test server with stand-in activities (test/harness/fleet-stand-ins.ts)
 * under a stand-in saga (test/harness/workflows/fleet-parent.ts). Each case scripts what the agents and
 * checks report and asserts what the fleet decided: which activities ran, in which order, with what notes,
 * checks and questions. The real-server tests (fleet.test.ts, spec-changes.test.ts, escalation-edit.test.ts)
 * take the same paths end to end with real agents.
 */
import type { Interaction } from '../../../../src/domain/contract/state';
import { inputsOf, type Call } from '../../../harness/fleet-stand-ins';
import {
  createFleetTestEnv,
  fleetPlan,
  loggedLines,
  runFleet,
  type FleetTestEnv,
} from '../../../harness/fleet-run';

describe('fleet decisions on a blocked task (time-skipping test server)', () => {
  let fx: FleetTestEnv;
  beforeAll(async () => {
    fx = await createFleetTestEnv();
  }, 120_000);
  afterAll(async () => fx?.env.teardown());

  test('a blocked task is re-delegated with the failure in its notes, and passes', async () => {
    const { result, calls, view } = await runFleet(fx, {
      plan: fleetPlan([{ id: 1, owns: ['src/a.ts'] }]),
      script: { attempts: { '1.1': ['fail', 'pass'] } },
    });
    expect(result.outcome).toBe('integrated');
    const attempts = inputsOf(calls, 'runTaskAttempt');
    expect(attempts.map((a) => a.agent.runLabel)).toEqual(['m1t1-d1-a1', 'm1t1-d2-a2']);
    expect(attempts[0]!.agent.context?.notes).toEqual([]);
    expect(attempts[1]!.agent.context?.notes).toEqual([
      'Previous delegation was blocked: Check failed: task 1 check (`node check-1.js`) exit 1',
    ]);
    // The retained evidence is the failed attempt's check output.
    expect(attempts[1]!.agent.attachments).toEqual(['/runs/m1t1-d1-a1/check-1.txt']);
    // No planner run, no question: a first blocked delegation is simply re-delegated.
    expect(inputsOf(calls, 'runRoleAgent')).toEqual([]);
    expect(view.opened).toEqual([]);
    expect(calls.map((c) => c.name)).toEqual([
      'runTaskAttempt',
      'runTaskAttempt',
      'prepareWorktree',
      'mergeBranches',
      'runChecks',
      'headCommit',
      'removeWorktree',
      'recordMilestone',
    ]);
  });
  test('an agent that reports a spec gap stops at once; the gap is asked (gap-m1t1-d1) and the answer re-delegates', async () => {
    const { result, calls, view } = await runFleet(fx, {
      plan: fleetPlan([{ id: 1, owns: ['src/a.ts'] }]),
      attempts: 3,
      script: { attempts: { '1.1': [{ blocked: 'SPEC GAP: which language to greet in' }, 'pass'] } },
      drive: async (saga) => {
        const asked = await saga.question('gap-m1t1-d1');
        expect(asked.options).toEqual(['answer', 'skip', 'abort']);
        await saga.respond('gap-m1t1-d1', 'answer', 'English');
      },
    });
    expect(result.outcome).toBe('integrated');
    expect(view.opened.map((i) => i.id)).toEqual(['gap-m1t1-d1']);
    // One attempt of three (another paid run would not close the gap), then the answer's delegation.
    expect(calls.map((c) => c.name).slice(0, 4)).toEqual([
      'runTaskAttempt',
      'handoffTask',
      'prependDecision',
      'runTaskAttempt',
    ]);
    expect(inputsOf(calls, 'prependDecision')[0]!.entry.title).toBe(
      'Deviation: task 1.1 spec gap: which language to greet in — answered by tester: English',
    );
    expect(inputsOf(calls, 'runTaskAttempt')[1]!.agent.context?.notes).toEqual([
      expect.stringContaining('The user (tester) clarified: English.'),
    ]);
    expect(inputsOf(calls, 'runRoleAgent')).toEqual([]);
  });

  /** A task whose first two delegations fail their checks; `adjust`: the planner's change before the third. */
  const twiceBlocked = (adjust: Record<string, unknown>, third: ('pass' | 'fail')[] = ['pass']) => ({
    plan: fleetPlan([{ id: 1, owns: ['src/a.ts'] }]),
    script: {
      attempts: { '1.1': ['fail' as const, 'fail' as const, ...third] },
      adjust: (task: { id: number }) => (task.id === 1 ? adjust : {}),
    },
  });
  const lenient = [{ text: 'task 1 check', check: 'node check-1.js --lenient' }];
  const blocker = 'Check failed: task 1 check (`node check-1.js`) exit 1';

  test('blocked twice: the planner adjusts the checks, the user is asked (adj-…) and approves', async () => {
    let asked: Interaction | undefined;
    const { result, calls, view, ctx } = await runFleet(fx, {
      ...twiceBlocked({ validation: lenient }),
      drive: async (saga) => {
        asked = await saga.question('adj-m1t1-d3');
        await saga.respond('adj-m1t1-d3', 'approve');
      },
    });
    expect(result.outcome).toBe('integrated');
    expect(asked).toMatchObject({ kind: 'escalation', owner: `saga-${ctx.name}-m1t1-d3` });
    expect(asked!.prompt).toContain('stayed blocked in 2 delegations');
    expect(view.opened.map((i) => i.id)).toEqual(['adj-m1t1-d3']);
    // The third delegation: its worktree, the planner's revision in it, then the attempt on the new checks.
    expect(calls.map((c) => c.name).slice(0, 5)).toEqual([
      'runTaskAttempt',
      'runTaskAttempt',
      'prepareTaskWorktree',
      'runRoleAgent',
      'runTaskAttempt',
    ]);
    const [planner] = inputsOf(calls, 'runRoleAgent');
    expect(planner).toMatchObject({
      template: 'planner-revise',
      stage: 'revise',
      runLabel: 'm1t1-d3-adjust',
    });
    expect((planner!.context as { note: string }).note).toContain(blocker);
    const third = inputsOf(calls, 'runTaskAttempt')[2]!;
    expect(third.prepare).toBeUndefined(); // prepared for the planner already
    expect(third.checks.checks).toEqual(lenient);
    expect(third.agent.context?.notes).toContain(
      "Your task's spec was adjusted after the blocked delegations: validation: `node check-1.js --lenient`",
    );
    const decisions = inputsOf(calls, 'prependDecision').map((d) => d.entry.title);
    expect(decisions).toEqual([expect.stringMatching(/^Deviation: task 1\.1 spec changed/)]);
  });

  test('blocked twice under --autonomous: the adjustment of the checks is applied, recorded, not asked', async () => {
    const { result, calls, view } = await runFleet(fx, {
      ...twiceBlocked({ validation: lenient }),
      args: '--autonomous',
    });
    expect(result.outcome).toBe('integrated');
    expect(view.opened).toEqual([]);
    const [manifest] = inputsOf(calls, 'updateManifest');
    expect(manifest!.patch.auto_picked_checkpoints).toEqual([
      expect.objectContaining({ checkpoint: 'task-1.1-spec-adjustment-d3', decision: 'approve' }),
    ]);
    expect(inputsOf(calls, 'prependDecision').map((d) => d.entry.title)).toEqual([
      'Autonomous decision: task 1.1 spec adjusted without asking',
      expect.stringMatching(/^Deviation: task 1\.1 spec changed/),
    ]);
    expect(inputsOf(calls, 'runTaskAttempt')[2]!.checks.checks).toEqual(lenient);
  });

  describe('still blocked after the adjustment: escalated to the user (esc-m1t1-d3)', () => {
    const stillBlocked = () => twiceBlocked({ interfaces: 'exports a()' }, ['fail', 'pass']);
    /** Re-delegated, adjusted by the planner, blocked again: three delegations, one planner run, then asked. */
    const expectAdjustedThenAsked = (calls: Call[]) =>
      expect(calls.map((c) => c.name).slice(0, 6)).toEqual([
        'runTaskAttempt',
        'runTaskAttempt',
        'prepareTaskWorktree',
        'runRoleAgent',
        'runTaskAttempt',
        'prependDecision', // the fleet records the applied adjustment as a deviation when the task ends
      ]);

    test("answered retry: a fourth delegation with the user's note, which passes", async () => {
      let asked: Interaction | undefined;
      const run = await runFleet(fx, {
        ...stillBlocked(),
        drive: async (saga) => {
          asked = await saga.question('esc-m1t1-d3');
          await saga.respond('esc-m1t1-d3', 'retry', 'Use the helper in src/util.ts');
        },
      });
      const { result, calls, view } = run;
      expect(result.outcome).toBe('integrated');
      expect(asked!.prompt).toContain('still blocked after re-delegation and a spec adjustment');
      // An adjustment of the interfaces only is applied without asking: the escalation is the one question.
      expect(view.opened.map((i) => i.id)).toEqual(['esc-m1t1-d3']);
      const attempts = inputsOf(calls, 'runTaskAttempt');
      expect(attempts.map((a) => a.agent.runLabel)).toEqual([
        'm1t1-d1-a1',
        'm1t1-d2-a2',
        'm1t1-d3-a3',
        'm1t1-d4-a4',
      ]);
      expect(attempts[3]!.agent.context?.notes).toEqual(['Use the helper in src/util.ts']);
      expect(attempts[3]!.agent.attachments).toEqual(['/runs/m1t1-d3-a3/check-1.txt']);
      expect(inputsOf(calls, 'runRoleAgent')).toHaveLength(1); // no second adjustment
      expect(loggedLines(run)).toContain('Escalation of 1.1 answered by tester: retry');
    });

    test('answered skip: the task is skipped and the milestone integrates without it', async () => {
      const { result, calls } = await runFleet(fx, {
        ...stillBlocked(),
        drive: async (saga) => {
          await saga.question('esc-m1t1-d3');
          await saga.respond('esc-m1t1-d3', 'skip');
        },
      });
      expect(result.outcome).toBe('integrated');
      expectAdjustedThenAsked(calls);
      expect(inputsOf(calls, 'mergeBranches')).toEqual([]); // nothing passed, nothing to merge
      expect(result.progress?.milestones[0]!.tasks.map((t) => [t.id, t.status])).toEqual([
        ['1.1', 'skipped'],
      ]);
    });

    test('answered abort: the phase ends aborted, nothing is integrated', async () => {
      const { result, calls } = await runFleet(fx, {
        ...stillBlocked(),
        drive: async (saga) => {
          await saga.question('esc-m1t1-d3');
          await saga.respond('esc-m1t1-d3', 'abort');
        },
      });
      expect(result.outcome).toBe('aborted');
      expectAdjustedThenAsked(calls);
      expect(inputsOf(calls, 'prepareWorktree')).toEqual([]);
    });
  });
});
