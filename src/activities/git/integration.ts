/**
 * Milestone integration's merges in one activity: the task branches in merge order, stopping at the first
 * conflict (left in progress for the resolver). One round trip for the whole milestone, not one per task.
 */
import { listedPaths } from '../git-ops';
import type { GitActivities } from './git-activities';

export function createIntegrationGitActivities(deps: { git: GitActivities }) {
  return {
    async mergeBranches(input: { worktree: string; merges: { branch: string; message: string }[] }) {
      let merged = 0;
      let head: string | null = null;
      for (const { branch, message } of input.merges) {
        const merge = await deps.git.mergeBranch({ worktree: input.worktree, branch, message });
        head = merge.head;
        if (merge.status === 'conflict')
          return { merged, conflict: { branch, conflictedFiles: listedPaths(merge.conflictedFiles) }, head };
        merged++;
      }
      head ??= (await deps.git.headCommit({ worktree: input.worktree })).commit;
      return { merged, conflict: null, head };
    },
  };
}
