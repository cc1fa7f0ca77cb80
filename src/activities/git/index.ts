/**
 * The saga's git activities: `git-activities` (one per git operation of ../git-ops), and `task` and
 * `integration`, which compose them into one activity per task start, task handoff and milestone merge.
 */
export { createGitActivities, type GitActivities } from './git-activities';
export { createIntegrationGitActivities } from './integration';
export { DEFAULT_GIT_TIMEOUT_MS, GitError, gitTimeoutMs, runGit } from '../git-ops';
export { createTaskGitActivities, type HandoffSettings } from './task';
