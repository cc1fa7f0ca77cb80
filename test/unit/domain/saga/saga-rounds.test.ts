/**
 * The saga's rounds: round 1 implements the whole plan, a later round only the reported issues' milestone;
 * the implementation starts from what the saga already knows; and the log lines the saga writes about them.
 */
import { noUsage } from '../../../../src/domain/agents/usage';
import type { Plan, PlanMilestone } from '../../../../src/domain/plan';
import {
  answeredLine,
  exitCriteriaLine,
  fastForwardLine,
  implementationCarry,
  issuesReportedLine,
  roundMilestoneIds,
  waitingLine,
  withIssuesMilestone,
} from '../../../../src/domain/saga/rounds';
import type { Answer, Interaction, MilestoneState } from '../../../../src/domain/contract/state';

const milestone = (id: number): PlanMilestone => ({ id, slug: `m${id}`, title: `M${id}` }) as PlanMilestone;
const plan = { milestones: [milestone(1), milestone(2)], exit_criteria: [] } as unknown as Plan;

describe('saga rounds', () => {
  test('round 1 implements every milestone, a later round only the newest', () => {
    expect(roundMilestoneIds(plan, 1)).toEqual([1, 2]);
    expect(roundMilestoneIds(withIssuesMilestone(plan, milestone(3)), 2)).toEqual([3]);
  });

  test('the issues milestone is added last, the plan given is not changed', () => {
    const next = withIssuesMilestone(plan, milestone(3));
    expect(next.milestones.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(plan.milestones).toHaveLength(2);
  });

  test('the implementation carries known milestones or spend, else nothing', () => {
    const empty = { milestones: [], usage: noUsage(), planSummary: null };
    expect(implementationCarry(empty)).toEqual({});
    const spent = { ...empty, usage: { ...noUsage(), costUsd: 0.5 } };
    expect(implementationCarry(spent)).toEqual({ carried: { milestones: [], usage: spent.usage } });
    const known = { ...empty, milestones: [{ id: 1 } as MilestoneState] };
    expect(implementationCarry(known)).toEqual({
      carried: { milestones: known.milestones, usage: noUsage() },
    });
  });

  test('log lines', () => {
    expect(exitCriteriaLine([{ result: 'passed' }, { result: 'failed' }])).toBe('Exit criteria: 1/2 passed');
    expect(fastForwardLine('main', { ok: true })).toBe('Fast-forwarded main to the integration branch');
    expect(fastForwardLine('main', { ok: false, reason: 'moved on' })).toBe(
      'Did not fast-forward main: moved on',
    );
    expect(issuesReportedLine('ann', 2, 3)).toBe('ann reported 2 issue(s); starting round 3');
    expect(waitingLine({ kind: 'question', id: 'q1' } as Interaction)).toBe('Waiting for input: question q1');
    const answer = { user: 'ann', interactionId: 'q1', choice: 'yes' } as Answer;
    expect(answeredLine(answer)).toBe('ann answered q1: yes');
    expect(answeredLine({ ...answer, text: 'why' })).toBe('ann answered q1: yes (why)');
  });
});
