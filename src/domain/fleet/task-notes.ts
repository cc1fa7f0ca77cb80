/** Notes the saga adds to an implementer's prompt context (pure: the task workflow and activities share them). */

/** A dependency whose branch could not be merged into the task's worktree automatically. */
export const conflictNote = (conflict: { branch: string; files: string[] }): string =>
  `Dependency branch ${conflict.branch} conflicts with this one in ${conflict.files.join(', ')}; merge it yourself.`;
