/**
 * The git steps of one worker task, each done in one activity so a task pays one round trip for its
 * start and one for its handoff: worktree + dependency merges, and commit + worktree removal (in that
 * order: the worktree goes only after its work is committed).
 */
import type { GitActivities } from './git-activities';
import { commitWork, handedOff, listedPaths, pathExists, runGit } from '../git-ops';

export interface HandoffSettings {
  maxFiles: number;
  maxFileBytes: number;
  skipHooks: boolean;
}
type PrepareInput = Parameters<GitActivities['prepareWorktree']>[0];

/** Neither the worktree nor the task branch exists yet, and `dependency` already contains the base. */
async function startsCleanlyAt(input: PrepareInput, dependency: string): Promise<boolean> {
  const [worktreeThere, branchThere, baseContained] = await Promise.all([
    pathExists(input.worktree),
    runGit(input.repo, ['rev-parse', '--verify', '-q', `refs/heads/${input.branch}`]).then(
      () => true,
      () => false,
    ),
    runGit(input.repo, ['merge-base', '--is-ancestor', input.base, dependency]).then(
      () => true,
      () => false,
    ),
  ]);
  return !worktreeThere && !branchThere && baseContained;
}

export function createTaskGitActivities(deps: { git: GitActivities }) {
  const { git } = deps;
  return {
    /** Creates (or reuses) the task worktree and merges in finished same-milestone dependencies. */
    async prepareTaskWorktree(input: PrepareInput & { mergeBranches: string[]; mergeMessage: string }) {
      const { mergeBranches, mergeMessage, ...prepare } = input;
      // A new task branch starts at its first dependency when that contains the base already: the same
      // files as merging it in, without the merge (the critical path of a dependency chain runs through here).
      const [first, ...others] = mergeBranches;
      const startAtFirst = first !== undefined && (await startsCleanlyAt(input, first));
      const prepared = await git.prepareWorktree(startAtFirst ? { ...prepare, base: first } : prepare);
      // Changed files are reported relative to the start state including the dependencies' work.
      let startCommit = prepared.baseCommit;
      const conflicts: { branch: string; files: string[]; fileCount: number }[] = [];
      for (const branch of startAtFirst ? others : mergeBranches) {
        const merge = await git.mergeBranch({
          worktree: prepared.worktree,
          branch,
          message: `${mergeMessage} ${branch}`,
        });
        if (merge.status !== 'conflict') startCommit = merge.head;
        else {
          await git.abortMerge({ worktree: prepared.worktree });
          // Bounded: a result near Temporal's 2 MB payload limit would fail the activity after the work.
          conflicts.push({
            branch,
            files: listedPaths(merge.conflictedFiles),
            fileCount: merge.conflictedFiles.length,
          });
        }
      }
      return { ...prepared, startCommit, conflicts };
    },

    /**
     * The durable handoff: commit whatever the agent left onto the task branch (brought back there when the
     * agent checked out something else), then remove the worktree. A worktree that is not there (the task
     * was cancelled before it was made) has nothing to hand off: the branch's tip is the task's commit.
     */
    async handoffTask(input: {
      repo: string;
      worktree: string;
      message: string;
      baseCommit?: string;
      branch?: string;
      /** `worktree.copy` entries: never committed. */
      excludePaths?: string[];
      /** From saga.config.yaml `handoff:`; absent in inputs recorded before it existed (defaults then). */
      settings?: HandoffSettings;
    }) {
      if (input.branch && !(await pathExists(input.worktree))) {
        const tip = await runGit(input.repo, ['rev-parse', '--verify', '-q', `refs/heads/${input.branch}`]);
        return {
          commit: tip.trim(),
          committed: false,
          changedFiles: [] as string[],
          changedFileCount: 0,
          removed: false,
          notes: [] as string[],
          refused: undefined as string | undefined,
        };
      }
      const work = await commitWork({
        worktree: input.worktree,
        message: input.message,
        baseCommit: input.baseCommit,
        branch: input.branch,
        exclude: input.excludePaths ?? [],
        ...input.settings,
      });
      if (work.refused !== null) {
        // Nothing committed or removed: the worktree stays as the agent left it, for the user to look at.
        const tip = input.branch ? `refs/heads/${input.branch}` : 'HEAD';
        const handoff = await handedOff(input.branch ? input.repo : input.worktree, tip, work);
        return { ...handoff, removed: false };
      }
      const removal = () =>
        git.removeWorktree({ repo: input.repo, worktree: input.worktree, copies: input.excludePaths ?? [] });
      // With the branch known, the commit is read from the repository while the worktree is removed (the
      // work is committed by now); inputs of older code read it in the worktree first.
      const [handoff, removed] = input.branch
        ? await Promise.all([handedOff(input.repo, `refs/heads/${input.branch}`, work), removal()])
        : [await handedOff(input.worktree, 'HEAD', work), await removal()];
      return { ...handoff, removed: removed.removed };
    },
  };
}
