/** What a task owns (`owns` paths and globs): overlaps between tasks, changed files outside them. Pure. */
import { taskRef } from '../contract/naming';
import type { PlanMilestone } from './schema';

/**
 * The part of an owned path that decides overlaps: `./` and trailing `/` dropped, and a glob cut back to the
 * directory before its first wildcard (so `src/**` counts as all of `src`). Empty means the whole repo.
 */
function ownedRoot(p: string): string {
  const segments = p
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  const glob = segments.findIndex((s) => /[*?[\]{}]/.test(s));
  return (glob === -1 ? segments : segments.slice(0, glob)).join('/');
}

/**
 * Changed files that none of the task's `owns` entries covers (a glob counts as its folder, as for
 * overlaps). For a warning: a task may need to touch a shared file, but the user should hear of it.
 */
export function filesOutsideOwns(owns: readonly string[], changedFiles: readonly string[]): string[] {
  const roots = owns.map(ownedRoot);
  const covered = (file: string) =>
    roots.some((root) => root === '' || file === root || file.startsWith(`${root}/`));
  return changedFiles.filter((file) => !covered(file));
}

/** The status line for a task that changed files outside its `owns`, or null when it did not. */
export function ownsWarning(
  ref: string,
  owns: readonly string[],
  changedFiles: readonly string[],
): string | null {
  const outside = filesOutsideOwns(owns, changedFiles);
  if (outside.length === 0) return null;
  const shown = outside.slice(0, 5).join(', ');
  const more = outside.length > 5 ? ` and ${outside.length - 5} more` : '';
  return `Warning: task ${ref} changed files outside its owns: ${shown}${more}`;
}

function overlaps(a: string, b: string): boolean {
  return a === b || a === '' || b === '' || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** Two tasks of one milestone owning the same path (or one inside the other) is a plan error. */
export function ownershipOverlaps(m: PlanMilestone, i: number): string[] {
  const problems: string[] = [];
  const claimed: { task: number; j: number; k: number; path: string; root: string }[] = [];
  m.tasks.forEach((t, j) => {
    t.owns.forEach((path, k) => {
      const root = ownedRoot(path);
      const clash = claimed.find((c) => c.task !== t.id && overlaps(c.root, root));
      if (clash) {
        problems.push(
          `milestones[${i}].tasks[${j}].owns[${k}]: "${path}" overlaps "${clash.path}" owned by task ` +
            `${taskRef(m.id, clash.task)} (milestones[${i}].tasks[${clash.j}].owns[${clash.k}]); ` +
            `two tasks of one milestone must not own the same path`,
        );
      }
      claimed.push({ task: t.id, j, k, path, root });
    });
  });
  return problems;
}
