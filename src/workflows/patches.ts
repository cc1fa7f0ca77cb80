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
  /**
   * `--parallel` runs its lanes with every profile, and a profile that does not say `subagent_dispatch`
   * can dispatch subagents.
   */
  parallelAnyProfile: 'parallel-any-profile',
  /** A planner that answers nothing at stage `criteria` plans with the exit criteria of its plan. */
  optionalCriteriaStage: 'optional-criteria-stage',
} as const;
