/**
 * Planning (docs/PROCEDURE.md §2.1-§2.9): discovery, closing ambiguity with the planner, exit criteria and
 * decomposition, the spec tree on disk, and the approval gate. Intake (name confirmation) happens in the
 * saga workflow before this phase, so nothing is created on disk before the user confirms. The phase's
 * state lives in a PlanningSession.
 */
import { CancellationScope, setHandler } from '@temporalio/workflow';
import type { Plan } from '../../domain/plan';
import type { SagaContext } from '../../domain/saga/saga-input';
import { interactionAnsweredSignal } from '../../domain/saga/messages';
import type { ProgressEvent } from '../../domain/contract/state';
import { noUsage } from '../../domain/agents/usage';
import { quickActivities } from '../activity-proxies';
import { recordAnswer } from '../ask';
import type { PlanningSpend } from './planner-runs';
import { approvalGate } from './planning-approval';
import { closeAmbiguity } from './planning-questions';
import { PlanningSession, type PlanningResult } from './planning-session';
import { draftPlan } from './planning-steps';
import { planningWorktree, reportAll } from '../shared';

export type { PlanningResult } from './planning-session';

export interface PlanningInput {
  ctx: SagaContext;
  /** From `--plan`: the question loop is skipped, everything else still happens. */
  plan: Plan | null;
}

export async function planningWorkflow(input: PlanningInput): Promise<PlanningResult> {
  // The phase's API: answers to its questions (ambiguity, approval, planner runs) come back here.
  setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer));
  const { ctx } = input;
  const scratch = planningWorktree(ctx);
  const spend: PlanningSpend = { usage: noUsage(), sagaBudgetUsd: ctx.settings.budget.sagaUsd };
  // The phase's last progress goes back with the result (signals would cost the saga four events each).
  const closing: ProgressEvent[] = [];
  let result: PlanningResult | undefined;
  try {
    result = await runPlanning(input, scratch, spend, closing);
  } finally {
    const finished = await CancellationScope.nonCancellable(() =>
      quickActivities(ctx.hostQueue).finishPlanningWorktree({
        repo: ctx.repo,
        worktree: scratch,
        sagaDir: ctx.sagaDir,
      }),
    );
    closing.push({
      type: 'log',
      line:
        finished.checkoutUnchanged === false
          ? `Warning: the main checkout changed during planning: ${finished.differences.join('; ')}`
          : `Planning worktree ${finished.removed ? 'removed' : 'already gone'}; main checkout unchanged`,
    });
    // Failed or cancelled: no result carries them.
    if (!result) await reportAll(ctx, closing);
  }
  return { ...result, usage: spend.usage, sagaBudgetUsd: spend.sagaBudgetUsd, progress: closing };
}

async function runPlanning(
  { ctx, plan: givenPlan }: PlanningInput,
  scratch: string,
  spend: PlanningSpend,
  /** Where the phase's final progress goes (returned with the result). */
  closing: ProgressEvent[],
): Promise<PlanningResult> {
  const session = new PlanningSession(ctx, scratch, spend, closing);
  await session.discover();
  if (!givenPlan && !(await closeAmbiguity(session))) return session.result(false, null, 0);
  // Exit criteria, then milestones and tasks (a plan given with `--plan` is taken as it is).
  const draft = session.draftContext();
  const first: Plan | null = givenPlan ?? (await draftPlan(ctx, session.planner, draft));
  if (!first) return session.result(false, null, 0);
  return approvalGate(session, first, givenPlan ? null : draft);
}
