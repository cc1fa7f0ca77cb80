/** What a task child is started with: its branch, worktree, starting point, retained context and budget. */
import { cappedList } from '../domain/text/caps';
import type { BudgetGrant } from '../domain/fleet/budget';
import { archiveRef, integrationBranch, worktreePath } from '../domain/contract/naming';
import type { PlanMilestone } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import type { MilestoneState, TaskState } from '../domain/contract/state';
import type { TaskInput } from './task';

export interface Delegation {
  /** The integrated commit to redo the task on (its branch is moved there, the old tip archived). */
  rebaseOnto?: string;
  retained?: TaskInput['retained'];
  budget?: BudgetGrant;
  adjustSpec?: TaskInput['adjustSpec'];
}

export function taskInputFor(
  ctx: SagaContext,
  spec: PlanMilestone,
  task: TaskState,
  fleet: { milestones: MilestoneState[]; states: Map<string, TaskState> },
  delegation: Delegation,
): TaskInput {
  const taskSpec = spec.tasks.find((t) => t.id === task.task)!;
  const number = task.delegations + 1;
  const { rebaseOnto } = delegation;
  return {
    ctx,
    milestone: spec.id,
    spec: taskSpec,
    ...(task.specChanges?.length ? { specChanges: task.specChanges } : {}),
    ref: task.id,
    key: task.key,
    branch: task.branch,
    worktree: worktreePath(ctx, task.key),
    // Start from the integrated state (or the base branch), plus the branches of same-milestone dependencies.
    base: fleet.milestones.some((m) => m.status === 'integrated') ? integrationBranch(ctx.name) : ctx.base,
    mergeBranches: taskSpec.depends_on
      .map((ref) => fleet.states.get(ref))
      .filter((dep): dep is TaskState => !!dep && dep.milestone === task.milestone)
      .map((dep) => dep.branch),
    delegation: number,
    ...(rebaseOnto
      ? {
          resetBranch: {
            commit: rebaseOnto,
            archiveRef: archiveRef(`${ctx.name}/${task.key}-d${number}`),
          },
        }
      : {}),
    attemptOffset: task.attempts,
    retained: cappedRetained(delegation.retained),
    ...(delegation.adjustSpec ? { adjustSpec: delegation.adjustSpec } : {}),
    portBase: 20_000 + (task.milestone * 50 + task.task) * ctx.settings.worktree.portRangeSize,
    ...(delegation.budget ? { budget: delegation.budget } : {}),
  };
}

/** Notes (failure output, the user's words) are longer than paths: their own cap. */
const NOTES_CAP = { count: 50, bytes: 65_536 };

/** The retained context within the caps: each delegation's input stays small whatever failed before. */
const cappedRetained = (retained: TaskInput['retained'] | undefined): TaskInput['retained'] => ({
  evidence: cappedList(retained?.evidence ?? []),
  notes: cappedList(retained?.notes ?? [], NOTES_CAP),
});
