/** What the fleet gives a task child: its spec, branch and worktree, what earlier delegations left, its budget. */
import type { BudgetGrant } from '../../domain/fleet/budget';
import type { Plan, PlanTask } from '../../domain/plan';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { SpecChange } from '../../domain/contract/state';

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
