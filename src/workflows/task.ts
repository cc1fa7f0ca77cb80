/**
 * One worker task (docs/PROCEDURE.md §3.3-§3.9): its own worktree and branch, the agent in a
 * fix→validate loop (attempt → checks), the quality-locked review, a durable handoff (a commit on the task
 * branch), and only then the worktree's removal. A task that stays blocked goes back to the fleet, which
 * re-delegates it, adjusts its spec or asks the user (implementation.ts).
 * The history stays small: prompts, transcripts and check output live in files; history holds paths.
 * Each attempt is one activity (worktree set-up on the first, handoff on the last), so a task costs few
 * workflow-task round trips.
 */
import { log, patched, workflowInfo } from '@temporalio/workflow';
import type { BudgetGrant } from '../domain/fleet/budget';
import type { TaskReport } from '../domain/fleet/fleet';
import type { Plan, PlanTask } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import type { SpecChange } from '../domain/saga/state';
import { TaskDelegation } from './task-delegation';
import { PATCHES } from './patches';
import { sagaLog } from './shared';

export interface TaskInput {
  ctx: SagaContext;
  milestone: number;
  spec: PlanTask;
  /** Changes to the spec agreed since planning: every attempt's agent and reviewer get them. */
  specChanges?: SpecChange[];
  ref: string;
  key: string;
  branch: string;
  worktree: string;
  /** Branch or commit the task branch starts from (only used when the branch does not exist yet). */
  base: string;
  /** Branches of finished same-milestone dependencies, merged in so the agent builds on their work. */
  mergeBranches: string[];
  delegation: number;
  /**
   * Redo the task on top of another state: its branch is moved to `commit` first (the old tip is kept under
   * `archiveRef`), since an existing branch would otherwise be reused as it is and `base` ignored.
   */
  resetBranch?: { commit: string; archiveRef: string };
  /** Attempts made by earlier delegations: attempt numbers continue from here (SAGA_ATTEMPT, run labels). */
  attemptOffset?: number;
  /**
   * Set when the delegations before stayed blocked on something the spec may resolve: the planner adjusts
   * the task's spec (spec-adjustment.ts) before the first attempt. `plan`: the task alone as a valid plan.
   */
  adjustSpec?: { blocker: string; plan: Plan; evidence: string[] };
  /** Context kept from earlier delegations: failure output files and notes. */
  retained: { evidence: string[]; notes: string[] };
  portBase: number;
  /**
   * The saga budget when the task started (tasks started before budgets held have none): every agent run
   * is gated by it, the task reports its spend to the fleet after each run, and the fleet's signal updates it.
   */
  budget?: BudgetGrant;
}

export type { TaskReport };

export async function taskWorkflow(input: TaskInput): Promise<TaskReport> {
  const task = new TaskDelegation(input);
  if (task.deviation) {
    log.warn(task.deviation);
    if (patched(PATCHES.confinedTaskProfiles)) await sagaLog(input.ctx, task.deviation);
  }
  if (input.resetBranch) await task.resetBranch(input.resetBranch);
  task.listenToBudget();
  try {
    const adjusted = input.adjustSpec ? await task.adjustSpec(input.adjustSpec) : true;
    if (adjusted) await task.attemptUntilDone();
    if (task.run.status === 'passed' && input.ctx.flags.quality_locked) await task.review();
  } finally {
    // Durable handoff even when cancelled or failed: commit what is there, then remove the worktree.
    await task.handOff();
  }
  return task.run.report(workflowInfo(), task.profile.name);
}
