/** Staging a worktree's work for a handoff commit, leaving `worktree.copy` paths out. */
import { copyEntryPath, matchesCopyEntry, samplePaths } from './paths';
import { splitZ } from './queries';
import { runGit } from './run';

/** What `git add -A` staged: every path, and those whose new content is written (added, modified, type). */
export interface StagedWork {
  paths: string[];
  written: Set<string>;
}

/** Staged paths with their status in one git call (renames as delete + add, so every path is listed). */
async function stagedWork(worktree: string): Promise<StagedWork> {
  const tokens = splitZ(await runGit(worktree, ['diff', '--cached', '--name-status', '-z', '--no-renames']));
  const paths: string[] = [];
  const written = new Set<string>();
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const [status, file] = [tokens[i]!, tokens[i + 1]!];
    paths.push(file);
    if (/^[AMT]/.test(status)) written.add(file);
  }
  return { paths, written };
}

/**
 * Stages all the work in a worktree but `worktree.copy` paths (taken out again when the agent un-ignored or
 * force-added them; the files stay in the worktree).
 */
export async function stageWork(
  worktree: string,
  copies: readonly string[],
  notes: string[],
): Promise<StagedWork> {
  await runGit(worktree, ['add', '-A'], notes);
  const staged = await stagedWork(worktree);
  const caught = staged.paths.filter((f) => matchesCopyEntry(f, copies));
  if (caught.length === 0) return staged;
  const entries = copies
    .map(copyEntryPath)
    .filter((e) => e !== '' && caught.some((f) => matchesCopyEntry(f, [e])));
  await runGit(worktree, ['reset', '-q', '--', ...entries.map((e) => `:(literal)${e}`)], notes);
  notes.push(`not committed (worktree.copy): ${samplePaths(caught)}`);
  const kept = staged.paths.filter((f) => !matchesCopyEntry(f, copies));
  return { paths: kept, written: new Set(kept.filter((f) => staged.written.has(f))) };
}
