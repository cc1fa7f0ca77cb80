/**
 * A blocked task's spec, adjusted (docs/PROCEDURE.md §3.10 and §3.12: re-delegate with retained
 * context, or adjust the task spec; escalate when the blocker is not resolvable from the spec). Before the
 * delegation that follows a re-delegation that stayed blocked, the planner revises the task's spec from the
 * blocker in the task's fresh worktree (it sees the work so far), through its `revise` step (the same step
 * that revises a plan). Only the task's adjustable fields are taken; no change means only the user can
 * resolve it. The task delegation's `adjustSpec` step runs it over the delegation's TaskRun.
 */
import { patched } from '@temporalio/workflow';
import {
  ADJUSTMENT_CHOICE,
  adjustmentCheckpoint,
  adjustmentQuestion,
  autonomousAdjustmentEntry,
  decidingFields,
  rejectedAdjustment,
} from '../../domain/fleet/adjustment-approval';
import { specEditChange } from '../../domain/fleet/spec-edit';
import { validatePlan } from '../../domain/plan';
import { adjustmentNote, adjustmentOf, describeAdjustment } from '../../domain/fleet/spec-changes';
import type { SpecChange, Usage } from '../../domain/contract/state';
import { noUsage } from '../../domain/agents/usage';
import { processEndWhy } from '../../domain/text/process-end';
import { activitiesFor } from '../activity-proxies';
import { ask } from '../ask';
import { PATCHES } from '../patches';
import { plannerProfile, sagaLog } from '../shared';
import type { TaskInput } from './task-input';
import type { TaskRun } from './task-run';

type Adjust = NonNullable<TaskInput['adjustSpec']>;

/** One delegation's adjustment: the planner's run, the user's say, and the outcome applied to the run. */
export class SpecAdjustment {
  constructor(
    private readonly input: TaskInput,
    private readonly run: TaskRun,
    private readonly adjust: Adjust,
  ) {}

  /**
   * The planner revises the spec; its spend is added to the run, and a change it made (approved) becomes the
   * spec later attempts work from. Returns why there is none, or null when the spec was adjusted.
   */
  async apply(runLabel: string): Promise<string | null> {
    const maxBudgetUsd = this.run.runCap();
    const { outcome, usage } = await this.revise(runLabel, maxBudgetUsd);
    // Outside the planner's run: a cancellation while the user is asked must end the task, not read as a bad answer.
    const settled = typeof outcome === 'string' ? outcome : await this.settle(outcome);
    this.run.addUsage(usage);
    if (typeof settled === 'string') return settled;
    this.run.adjusted(settled);
    return null;
  }

  /** The planner's `revise` step in the fresh worktree: the change it makes, or why it makes none. */
  private async revise(
    runLabel: string,
    maxBudgetUsd: number | null,
  ): Promise<{ outcome: SpecChange | string; usage: Usage }> {
    const { input, adjust } = this;
    const { ctx } = input;
    const spec = this.run.spec;
    const { long } = activitiesFor(ctx, 60 * 60_000);
    const note = adjustmentNote({ ref: input.ref, title: spec.title }, adjust.blocker, input.delegation - 1);
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
      context: {
        plan: adjust.plan,
        note,
        goal: ctx.goal,
        request: ctx.source?.request ?? null,
        stage: 'revise',
        previousErrors: [],
      },
      memory: { repo: ctx.repo },
      attachments: adjust.evidence,
      runLabel,
      ...(maxBudgetUsd !== null ? { maxBudgetUsd } : {}),
    });
    const usage = run.usage ?? noUsage();
    const invalid = (why: string) => ({ outcome: `the planner's answer is invalid: ${why}`, usage });
    if (!run.report)
      return {
        outcome: `no answer from the planner (${run.reportError ?? 'no JSON'}; ${processEndWhy(run)})`,
        usage,
      };
    const checked = validatePlan(run.report, 'the adjusted plan');
    if (!checked.ok) return invalid(checked.errors.join('; '));
    let patch: SpecChange['patch'] | null;
    try {
      patch = adjustmentOf(spec, input.milestone, checked.plan);
    } catch (error) {
      return invalid((error as Error).message);
    }
    if (!patch) return { outcome: 'the planner found nothing in the spec to adjust', usage };
    const at = new Date().toISOString();
    const change: SpecChange = {
      source: 'adjusted',
      by: 'planner',
      at,
      text: describeAdjustment(patch),
      patch,
    };
    return { outcome: change, usage };
  }

  /**
   * An adjustment of the task's checks or scope changes agreed behaviour: the user approves, edits or
   * rejects it (the change shown); under --autonomous it is decided, cited in decisions.md and manifest.md,
   * and the change is marked so acceptance lists it. Other adjustments (interfaces, evidence) apply as they
   * are. Returns the change to apply, or why there is none.
   */
  private async settle(change: SpecChange): Promise<SpecChange | string> {
    const { input, adjust } = this;
    const { ctx } = input;
    if (!decidingFields(change.patch).length || !patched(PATCHES.adjustmentAsks)) return change;
    const task = { ref: input.ref, key: input.key, title: this.run.spec.title, delegation: input.delegation };
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
        entry: autonomousAdjustmentEntry(task, adjust.blocker, decided),
      });
      return decided;
    }
    await sagaLog(
      ctx,
      `Task ${input.ref}: the planner's adjustment changes its checks or scope; asking the user`,
    );
    const answer = await ask(ctx.sagaWorkflowId, adjustmentQuestion(task, adjust.blocker, change));
    if (answer.choice === ADJUSTMENT_CHOICE.approve)
      return { ...change, by: `planner, approved by ${answer.user}` };
    if (answer.choice === ADJUSTMENT_CHOICE.edit) return specEditChange(answer);
    return rejectedAdjustment(answer.user, change, answer.text);
  }
}
