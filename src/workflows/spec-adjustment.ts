/**
 * A blocked task's spec, adjusted (Saga procedure Phase 2, "Worker blocked": re-delegate with retained
 * context, or adjust the task spec; escalate when the blocker is not resolvable from the spec). Before the
 * delegation that follows a re-delegation that stayed blocked, the planner revises the task's spec from the
 * blocker in the task's fresh worktree (it sees the work so far), through its `revise` step (the same step
 * that revises a plan). Only the task's adjustable fields are taken; no change means only the user can
 * resolve it.
 */
import { validatePlan, type PlanTask } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import { adjustmentNote, adjustmentOf, describeAdjustment } from '../domain/fleet/spec-changes';
import type { SpecChange, Usage } from '../domain/saga/state';
import { noUsage } from '../domain/agents/usage';
import { processEndWhy } from '../domain/text/process-end';
import { activitiesFor } from './activity-proxies';
import { plannerProfile } from './shared';
import type { TaskInput } from './task';

export type SpecAdjustment = { change: SpecChange; usage: Usage } | { problem: string; usage: Usage };

export async function adjustTaskSpec(
  ctx: SagaContext,
  input: Pick<TaskInput, 'ref' | 'milestone' | 'worktree' | 'delegation'> & {
    spec: PlanTask;
    adjust: NonNullable<TaskInput['adjustSpec']>;
    runLabel: string;
    maxBudgetUsd: number | null;
  },
): Promise<SpecAdjustment> {
  const { long } = activitiesFor(ctx, 60 * 60_000);
  const note = adjustmentNote(
    { ref: input.ref, title: input.spec.title },
    input.adjust.blocker,
    input.delegation - 1,
  );
  const run = await long.runRoleAgent({
    template: 'planner-revise',
    sagaName: ctx.name,
    sagaDir: ctx.sagaDir,
    role: 'planner',
    stage: 'revise',
    taskId: input.ref,
    attempt: 1,
    profile: plannerProfile(ctx),
    workdir: input.worktree,
    context: { plan: input.adjust.plan, note, goal: ctx.goal, stage: 'revise', previousErrors: [] },
    memory: { repo: ctx.repo },
    attachments: input.adjust.evidence,
    runLabel: input.runLabel,
    ...(input.maxBudgetUsd !== null ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
  });
  const usage = run.usage ?? noUsage();
  if (!run.report) {
    return {
      problem: `no answer from the planner (${run.reportError ?? 'no JSON'}; ${processEndWhy(run)})`,
      usage,
    };
  }
  const checked = validatePlan(run.report, 'the adjusted plan');
  if (!checked.ok) return { problem: `the planner's answer is invalid: ${checked.errors.join('; ')}`, usage };
  try {
    const patch = adjustmentOf(input.spec, input.milestone, checked.plan);
    if (!patch) return { problem: 'the planner found nothing in the spec to adjust', usage };
    const at = new Date().toISOString();
    return {
      change: { source: 'adjusted', by: 'planner', at, text: describeAdjustment(patch), patch },
      usage,
    };
  } catch (error) {
    return { problem: `the planner's answer is invalid: ${(error as Error).message}`, usage };
  }
}
