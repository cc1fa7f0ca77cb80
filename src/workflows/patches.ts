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
  /** The saga's end waits for its PROGRESS.md projector to confirm its cancellation before completing. */
  projectorEndsFirst: 'projector-ends-first',
} as const;
