/**
 * The saga's git activities, split by concern: `run` (running git), `worktrees` + `worktree-activities` +
 * `setup`, `handoff`, `merges`, `maintenance`; `task` and `integration` compose them into one activity per
 * task start, task handoff and milestone merge.
 */
export { createGitActivities, type GitActivities } from './git-activities';
export { createIntegrationGitActivities } from './integration';
export { DEFAULT_GIT_TIMEOUT_MS, GitError, gitTimeoutMs, runGit } from './run';
export { createTaskGitActivities, type HandoffSettings } from './task';
