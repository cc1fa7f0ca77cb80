/**
 * The workflow code's patch ids (Temporal's `patched()`): each marks a change to the commands a running
 * workflow issues, so histories written before it replay on the old path (README, Versioning).
 */
export const PATCHES = {
  /** An integrated milestone's tasks go to runs/milestones/ and leave the carried state. */
  milestoneRecords: 'milestone-records',
  /** The PROGRESS.md projector runs on the host's projector queue, not in a host activity slot. */
  projectorQueue: 'projector-queue',
  /** A task whose plan names an unconfined profile runs the saga's own, logged as a deviation. */
  confinedTaskProfiles: 'confined-task-profiles',
  /** A spec gap's question offers the options its agent reported, the recommended one marked. */
  specGapOptions: 'spec-gap-options',
  /** A `D<n>:` fix task's spec carries the decision it corrects (question, choice, correction). */
  correctionSpecs: 'correction-specs',
  /** An escalation's `edit` may set the task's checks, scope and interfaces (not only add a note). */
  specEditFields: 'spec-edit-fields',
  /** A task whose agent timed out, hung or crashed twice in a row has its spec adjusted, as failed checks do. */
  agentFailureAdjusts: 'agent-failure-adjusts',
  /** A planner adjustment changing a task's checks or scope asks the user (decided and cited under --autonomous). */
  adjustmentAsks: 'adjustment-asks',
  /** A task check that cannot run (126/127) stops the task after one attempt; the user is asked about it. */
  unrunnableChecks: 'unrunnable-checks',
  /** Plan approval names the checks whose program is missing here (resolvePlanChecks). */
  checkResolution: 'check-resolution',
  /** An exit criterion verified by hand awaits the user's confirmation at acceptance, then counts as verified. */
  byHandVerified: 'by-hand-verified',
  /**
   * `--parallel` runs its lanes with every profile, and a profile that does not say `subagent_dispatch`
   * can dispatch subagents.
   */
  parallelAnyProfile: 'parallel-any-profile',
  /** A planner that answers nothing at stage `criteria` plans with the exit criteria of its plan. */
  optionalCriteriaStage: 'optional-criteria-stage',
  /** The saga's end waits for its PROGRESS.md projector to confirm its cancellation before completing. */
  projectorEndsFirst: 'projector-ends-first',
  /** Chat is told of a question after the workflow task that opened it, so one answered in it at once is not. */
  quietAnsweredAtOnce: 'quiet-answered-at-once',
} as const;
