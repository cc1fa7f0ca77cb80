/**
 * A blocked task's spec, adjusted (docs/PROCEDURE.md §3.10 and §3.12: re-delegate with retained
 * context, or adjust the task spec; escalate when the blocker is not resolvable from the spec). Before the
 * delegation that follows a re-delegation that stayed blocked, the planner revises the task's spec from the
 * blocker in the task's fresh worktree (it sees the work so far), through its `revise` step (the same step
 * that revises a plan). Only the task's adjustable fields are taken; no change means only the user can
 * resolve it.
 */
import { patched } from '@temporalio/workflow';
import {
  ADJUSTMENT_CHOICE,
  adjustmentCheckpoint,
  adjustmentQuestion,
  autonomousAdjustmentEntry,
  decidingFields,
  rejectedAdjustment,
} from '../domain/fleet/adjustment-approval';
import { specEditChange } from '../domain/fleet/spec-edit';
import { validatePlan, type PlanTask } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import { adjustmentNote, adjustmentOf, describeAdjustment } from '../domain/fleet/spec-changes';
import type { SpecChange, Usage } from '../domain/saga/state';
import { noUsage } from '../domain/agents/usage';
import { processEndWhy } from '../domain/text/process-end';
import { activitiesFor } from './activity-proxies';
import { ask } from './ask';
import { PATCHES } from './patches';
import { plannerProfile, sagaLog } from './shared';
import type { TaskInput } from './task';

export type SpecAdjustment = { change: SpecChange; usage: Usage } | { problem: string; usage: Usage };

export async function adjustTaskSpec(
  ctx: SagaContext,
  input: Pick<TaskInput, 'ref' | 'key' | 'milestone' | 'worktree' | 'delegation'> & {
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
  let patch: SpecChange['patch'] | null;
  try {
    patch = adjustmentOf(input.spec, input.milestone, checked.plan);
  } catch (error) {
    return { problem: `the planner's answer is invalid: ${(error as Error).message}`, usage };
  }
  if (!patch) return { problem: 'the planner found nothing in the spec to adjust', usage };
  const at = new Date().toISOString();
  const change: SpecChange = {
    source: 'adjusted',
    by: 'planner',
    at,
    text: describeAdjustment(patch),
    patch,
  };
  // Outside the try: a cancellation while the user is asked must end the task, not read as a bad answer.
  return { ...(await settleAdjustment(ctx, input, change)), usage };
}

/**
 * An adjustment of the task's checks or scope changes agreed behaviour: the user approves, edits or rejects
 * it (the change shown); under --autonomous it is decided, cited in decisions.md and manifest.md, and the
 * change is marked so acceptance lists it. Other adjustments (interfaces, evidence) apply as they are.
 */
async function settleAdjustment(
  ctx: SagaContext,
  input: Pick<TaskInput, 'ref' | 'key' | 'delegation'> & { spec: PlanTask; adjust: { blocker: string } },
  change: SpecChange,
): Promise<{ change: SpecChange } | { problem: string }> {
  if (!decidingFields(change.patch).length || !patched(PATCHES.adjustmentAsks)) return { change };
  const task = { ref: input.ref, key: input.key, title: input.spec.title, delegation: input.delegation };
  if (ctx.flags.autonomous) {
    const decided = { ...change, by: 'planner (--autonomous)', autonomous: true };
    const { quick } = activitiesFor(ctx);
    await quick.updateManifest({
      sagaDir: ctx.sagaDir,
      append: true,
      patch: {
        auto_picked_checkpoints: [
          {
            phase: 'implementation',
            checkpoint: adjustmentCheckpoint(input.ref, input.delegation),
            decision: ADJUSTMENT_CHOICE.approve,
            timestamp: change.at,
            reason: `--autonomous: the planner's adjustment of task ${input.ref} (${change.text})`,
            flag_sources: { autonomous: ctx.flags.autonomous_source },
          },
        ],
      },
    });
    await quick.prependDecision({
      sagaDir: ctx.sagaDir,
      entry: autonomousAdjustmentEntry(task, input.adjust.blocker, decided),
    });
    return { change: decided };
  }
  await sagaLog(
    ctx,
    `Task ${input.ref}: the planner's adjustment changes its checks or scope; asking the user`,
  );
  const answer = await ask(ctx.sagaWorkflowId, adjustmentQuestion(task, input.adjust.blocker, change));
  if (answer.choice === ADJUSTMENT_CHOICE.approve)
    return { change: { ...change, by: `planner, approved by ${answer.user}` } };
  if (answer.choice === ADJUSTMENT_CHOICE.edit) return { change: specEditChange(answer) };
  return { problem: rejectedAdjustment(answer.user, change, answer.text) };
}
