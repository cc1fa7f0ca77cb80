/**
 * Phase 3, acceptance: the user accepts, or reports issues that become a new milestone of tasks for a
 * focused implementation round. The final acceptance always belongs to the user, in every mode.
 */
import { issuesMilestone } from '../domain/fleet';
import type { Plan, PlanMilestone } from '../domain/plan';
import type { SagaContext } from '../domain/saga-input';
import { ask } from './ask';
import type { ValidationResult } from './validation';

export interface AcceptanceInput {
  ctx: SagaContext;
  plan: Plan;
  round: number;
  validation: ValidationResult;
  reportPath: string;
}

export type AcceptanceResult =
  | { accepted: true; fastForward: boolean; by: string }
  | { accepted: false; issues: string[]; milestone: PlanMilestone; by: string };

export const ACCEPTANCE_OPTIONS = ['accept', 'accept and fast-forward', 'report issues'] as const;

export async function acceptanceWorkflow({
  ctx,
  plan,
  round,
  validation,
  reportPath,
}: AcceptanceInput): Promise<AcceptanceResult> {
  const summary = validation.criteria.map((c) => `${c.id} ${c.result}`).join(', ');
  const answer = await ask(ctx.sagaWorkflowId, {
    id: `acceptance-${round}`,
    kind: 'acceptance',
    prompt: `Review ${reportPath} (exit criteria: ${summary}). Accept the saga, or report issues (one per line in --text).`,
    options: [...ACCEPTANCE_OPTIONS],
    recommended: validation.passed ? 0 : 2,
    textRequiredFor: ['report issues'],
  });
  if (answer.choice !== 'report issues') {
    return { accepted: true, fastForward: answer.choice === 'accept and fast-forward', by: answer.user };
  }
  const issues = (answer.text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return { accepted: false, issues, milestone: issuesMilestone(plan, issues, round), by: answer.user };
}
