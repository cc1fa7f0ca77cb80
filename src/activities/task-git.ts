/**
 * The git steps of one worker task, each done in one activity so a task pays one round trip for its
 * start and one for its handoff: worktree + dependency merges, and commit + worktree removal (in that
 * order: the worktree goes only after its work is committed).
 */
import type { createGitActivities } from './git';

type Git = ReturnType<typeof createGitActivities>;
type PrepareInput = Parameters<Git['prepareWorktree']>[0];

export function createTaskGitActivities(deps: { git: Git }) {
  const { git } = deps;
  return {
    /** Creates (or reuses) the task worktree and merges in finished same-milestone dependencies. */
    async prepareTaskWorktree(input: PrepareInput & { mergeBranches: string[]; mergeMessage: string }) {
      const { mergeBranches, mergeMessage, ...prepare } = input;
      const prepared = await git.prepareWorktree(prepare);
      // Changed files are reported relative to the start state including the dependencies' work.
      let startCommit = prepared.baseCommit;
      const conflicts: { branch: string; files: string[] }[] = [];
      for (const branch of mergeBranches) {
        const merge = await git.mergeBranch({
          worktree: prepared.worktree,
          branch,
          message: `${mergeMessage} ${branch}`,
        });
        if (merge.status === 'merged') startCommit = merge.head;
        if (merge.status === 'conflict') {
          await git.abortMerge({ worktree: prepared.worktree });
          conflicts.push({ branch, files: merge.conflictedFiles });
        }
      }
      return { ...prepared, startCommit, conflicts };
    },

    /** The durable handoff: commit whatever the agent left, then remove the worktree. */
    async handoffTask(input: { repo: string; worktree: string; message: string; baseCommit: string }) {
      const handoff = await git.commitHandoff({
        worktree: input.worktree,
        message: input.message,
        baseCommit: input.baseCommit,
      });
      const removal = await git.removeWorktree({ repo: input.repo, worktree: input.worktree });
      return {
        commit: handoff.commit,
        committed: handoff.committed,
        changedFiles: handoff.changedFiles,
        removed: removal.removed,
      };
    },
  };
}
