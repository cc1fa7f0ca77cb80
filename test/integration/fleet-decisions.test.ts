/**
 * The fleet's decisions about a blocked task, in seconds: the implementation workflow and its task children
 * run on Temporal's time-skipping test server with stand-in activities (test/harness/fleet-stand-ins.ts)
 * under a stand-in saga (test/harness/workflows/fleet-parent.ts). Each case scripts what the agents and
 * checks report and asserts what the fleet decided: which activities ran, in which order, with what notes,
 * checks and questions. The real-server tests (fleet.test.ts, spec-changes.test.ts, escalation-edit.test.ts)
 * take the same paths end to end with real agents.
 */
import { inputsOf } from '../harness/fleet-stand-ins';
import { createFleetTestEnv, fleetPlan, runFleet, type FleetTestEnv } from '../harness/fleet-run';

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
});
