/**
 * The saga's rounds (implementation → validation → acceptance, again for each round of reported issues):
 * what a round works on and the log lines the saga writes about it. Pure: also runs in workflow code.
 */
import type { Plan, PlanMilestone } from '../plan';
import type { ProgressView } from './phase-progress';
import type { Answer, Interaction } from '../contract/state';

/** Round 1 implements the whole plan; each later round only the milestone of the issues reported before it. */
export function roundMilestoneIds(plan: Plan, round: number): number[] {
  const newest = plan.milestones[plan.milestones.length - 1]!.id;
  return round === 1 ? plan.milestones.map((m) => m.id) : [newest];
}

/**
 * What the implementation phase starts from: the milestones and spend the saga already knows (round 1
 * starts from what planning spent, which the fleet's budget counts); nothing when there is none.
 */
export function implementationCarry(
  progress: ProgressView,
):
  | { carried: { milestones: ProgressView['milestones']; usage: ProgressView['usage'] } }
  | Record<string, never> {
  return progress.milestones.length || progress.usage.costUsd > 0
    ? { carried: { milestones: progress.milestones, usage: progress.usage } }
    : {};
}

/** The plan of the next round: the reported issues' milestone added last. */
export const withIssuesMilestone = (plan: Plan, milestone: PlanMilestone): Plan => ({
  ...plan,
  milestones: [...plan.milestones, milestone],
});

export const exitCriteriaLine = (criteria: { result: string }[]): string =>
  `Exit criteria: ${criteria.filter((c) => c.result === 'passed').length}/${criteria.length} passed`;

export const fastForwardLine = (base: string, ff: { ok: boolean; reason?: string }): string =>
  ff.ok ? `Fast-forwarded ${base} to the integration branch` : `Did not fast-forward ${base}: ${ff.reason}`;

export const issuesReportedLine = (by: string, issues: number, nextRound: number): string =>
  `${by} reported ${issues} issue(s); starting round ${nextRound}`;

export const waitingLine = (opened: Interaction): string => `Waiting for input: ${opened.kind} ${opened.id}`;

export const answeredLine = (answered: Answer): string =>
  `${answered.user} answered ${answered.interactionId}: ${answered.choice}${answered.text ? ` (${answered.text})` : ''}`;
