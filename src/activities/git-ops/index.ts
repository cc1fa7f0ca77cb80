/**
 * The saga's git operations as plain functions: each checks its input, runs git and returns a result, with
 * no activity Context needed (inside an activity, a long git command heartbeats). The git activities
 * (../git) wrap them for the workflows; the CLI calls them directly (start, continue, cleanup, doctor).
 *
 * Modules by concern: `run` (running git), `queries`, `paths`, `schemas`; `repo` (where a saga starts),
 * `worktrees` + `worktree-ops` + `setup` (task and integration worktrees), `staging` + `return-to-branch` +
 * `handoff` (the durable handoff commit), `nested-repos` (what agent-written trees may not hold), `merges`,
 * `branches`, `saga-worktrees`, `reconcile`.
 */
export { fastForwardBase, headCommit, isAncestor, resetTaskBranch } from './branches';
export { commitHandoff, commitWork, handedOff, type CommittedWork } from './handoff';
export { abortMerge, completeMerge, mergeBranch, resetHard } from './merges';
export { listedPaths, pathExists } from './paths';
export { reconcileGit, type GitFinding } from './reconcile';
export { redoMerge, type RedoMergeResult } from './redo-merge';
export { checkRepo } from './repo';
export { DEFAULT_GIT_TIMEOUT_MS, execGit, GitError, gitTimeoutMs, runGit } from './run';
export { cleanupSagaWorktrees, listSagaWorktrees } from './saga-worktrees';
export {
  ensureIntegrationWorktree,
  prepareWorktree,
  removeWorktree,
  setUpWorktree,
  type SetupDeps,
} from './worktree-ops';
