/**
 * Every git operation of the saga as an idempotent activity: worktrees per task, durable handoff commits,
 * milestone integration (merge, resolve, revert) and reconciliation when a saga is continued.
 * The activity names are recorded in workflow histories: renaming one breaks the replay of running sagas.
 */
import { createHandoffActivities } from './handoff';
import { createMaintenanceActivities } from './maintenance';
import { createMergeActivities } from './merges';
import { createWorktreeActivities } from './worktree-activities';

export function createGitActivities(deps: { sagaHome: string }) {
  return {
    ...createWorktreeActivities(deps),
    ...createHandoffActivities(),
    ...createMergeActivities(),
    ...createMaintenanceActivities(),
  };
}

export type GitActivities = ReturnType<typeof createGitActivities>;
