/**
 * Every git operation of the saga as an idempotent activity: worktrees per task, durable handoff commits,
 * milestone integration (merge, resolve, revert) and reconciliation when a saga is continued. The work is
 * done by the plain functions of ../git-ops; these are their activity names.
 * The activity names are recorded in workflow histories: renaming one breaks the replay of running sagas.
 */
import type { z } from 'zod';
import * as ops from '../git-ops';
import type { PrepareWorktreeInputSchema, SetUpWorktreeInputSchema } from '../git-ops/schemas';

export function createGitActivities(deps: ops.SetupDeps) {
  return {
    // Where a saga starts, and the worktrees of tasks and milestone integrations.
    checkRepo: ops.checkRepo,
    prepareWorktree: (raw: z.input<typeof PrepareWorktreeInputSchema>) => ops.prepareWorktree(raw, deps),
    setUpWorktree: (raw: z.input<typeof SetUpWorktreeInputSchema>) => ops.setUpWorktree(raw, deps),
    removeWorktree: ops.removeWorktree,
    ensureIntegrationWorktree: ops.ensureIntegrationWorktree,
    // The durable handoff.
    commitHandoff: ops.commitHandoff,
    // Milestone integration.
    mergeBranch: ops.mergeBranch,
    completeMerge: ops.completeMerge,
    abortMerge: ops.abortMerge,
    resetHard: ops.resetHard,
    // Branch bookkeeping, the saga's worktrees, reconciliation and the final fast-forward.
    resetTaskBranch: ops.resetTaskBranch,
    headCommit: ops.headCommit,
    isAncestor: ops.isAncestor,
    listSagaWorktrees: ops.listSagaWorktrees,
    cleanupSagaWorktrees: ops.cleanupSagaWorktrees,
    reconcileGit: ops.reconcileGit,
    fastForwardBase: ops.fastForwardBase,
  };
}

export type GitActivities = ReturnType<typeof createGitActivities>;
