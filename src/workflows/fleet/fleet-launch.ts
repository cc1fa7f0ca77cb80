/**
 * A task's delegation started by the fleet (its `launcher` part): the child workflow's input (its branch,
 * worktree, starting point, retained context and budget), its start, and its outcome as a fleet event.
 */
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import type { BudgetGrant } from '../../domain/fleet/budget';
import type { PlanMilestone } from '../../domain/plan';
import { failureReason } from '../../domain/saga/failure';
import { archiveRef, integrationBranch, taskWorkflowId, worktreePath } from '../../domain/contract/naming';
import { SagaName } from '../../domain/contract/search-attributes';
import type { TaskState } from '../../domain/contract/state';
import { cappedList } from '../../domain/text/caps';
import type { Fleet } from './fleet';
import { taskWorkflow, type TaskInput } from '../task/task';

export interface Delegation {
  /** The integrated commit to redo the task on (its branch is moved there, the old tip archived). */
  rebaseOnto?: string;
  retained?: TaskInput['retained'];
  budget?: BudgetGrant;
  adjustSpec?: TaskInput['adjustSpec'];
}

/** Starts the fleet's task children. */
export class FleetLauncher {
  constructor(private readonly fleet: Fleet) {}

  /** Starts the task's child workflow (the fleet goes on scheduling while the server starts it). */
  launch(spec: PlanMilestone, task: TaskState): void {
    const { ctx, state, budget } = this.fleet;
    const { rebase, adjustSpec } = state.takeDelegation(task.id);
    const args = this.inputFor(spec, task, {
      ...(rebase ? { rebaseOnto: rebase } : {}),
      retained: state.retained.get(task.id),
      ...(adjustSpec ? { adjustSpec } : {}),
      ...(budget.limited ? { budget: budget.grantFor(task.id) } : {}),
    });
    const { delegation, worktree } = args;
    const workflowId = taskWorkflowId(ctx.name, task.milestone, task.task, delegation);
    // Running from now on, so the next scheduling pass never starts it twice; the saga hears at once (the
    // run id comes with the result).
    state.update(task, { status: 'running', delegations: delegation, workflowId, worktree, error: null });
    const started = startChild(taskWorkflow, {
      workflowId,
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `Task ${task.id} ${task.title} (delegation ${delegation})`,
      // Listed with its saga when the Web UI filters by SagaName (children do not inherit attributes).
      typedSearchAttributes: [{ key: SagaName, value: ctx.name }],
      args: [args],
    });
    const outcome = started
      .then((handle) => {
        budget.track(task.id, handle);
        task.runId = handle.firstExecutionRunId;
        return handle.result();
      })
      .then(
        (rep) => state.events.push({ type: 'done', ref: task.id, report: rep }),
        // The task's own reason, not its wrappers' ("Child Workflow execution failed").
        (error: unknown) => state.events.push({ type: 'failed', ref: task.id, error: failureReason(error) }),
      );
    state.inFlight.add(outcome);
    void outcome.finally(() => {
      state.inFlight.delete(outcome);
      budget.untrack(task.id, workflowId);
    });
  }

  /** The task child's input for its next delegation. */
  private inputFor(spec: PlanMilestone, task: TaskState, delegation: Delegation): TaskInput {
    const { ctx, state } = this.fleet;
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
      base: state.milestones.some((m) => m.status === 'integrated') ? integrationBranch(ctx.name) : ctx.base,
      mergeBranches: taskSpec.depends_on
        .map((ref) => state.states.get(ref))
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
}

/** Notes (failure output, the user's words) are longer than paths: their own cap. */
const NOTES_CAP = { count: 50, bytes: 65_536 };

/** The retained context within the caps: each delegation's input stays small whatever failed before. */
const cappedRetained = (retained: TaskInput['retained'] | undefined): TaskInput['retained'] => ({
  evidence: cappedList(retained?.evidence ?? []),
  notes: cappedList(retained?.notes ?? [], NOTES_CAP),
});
