/**
 * What each task added to the integration branch, for REPORT.md's "What was built": the diff its merge
 * commit made (the merge against its first parent), so a later task's or milestone's work is not counted
 * twice. Read from the object store (`--no-ext-diff`, `--no-textconv`): nothing of the landed work runs.
 */
import type { DiffStat } from '../../domain/record/report-built';
import { execGit } from './run';

/** Merges on the integration branch's first-parent line since it left `base`: commit → its parents. */
async function integrationMerges(repo: string, base: string, branch: string): Promise<Map<string, string[]>> {
  const out = await execGit(repo, [
    'rev-list',
    '--merges',
    '--first-parent',
    '--parents',
    `refs/heads/${base}..refs/heads/${branch}`,
  ]);
  const merges = new Map<string, string[]>();
  if (out.code !== 0) return merges;
  for (const line of out.stdout.split('\n').filter(Boolean)) {
    const [merge, ...parents] = line.trim().split(' ');
    merges.set(merge!, parents);
  }
  return merges;
}

/** `git diff --numstat` between two commits, summed (a binary file counts as changed, with no lines). */
async function diffStat(repo: string, from: string, to: string): Promise<DiffStat | null> {
  const out = await execGit(repo, [
    'diff',
    '--numstat',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    from,
    to,
    '--',
  ]);
  if (out.code !== 0) return null;
  const stat: DiffStat = { files: [], insertions: 0, deletions: 0 };
  for (const line of out.stdout.split('\n').filter(Boolean)) {
    const [added, deleted, ...file] = line.split('\t');
    stat.files.push(file.join('\t'));
    stat.insertions += Number(added) || 0;
    stat.deletions += Number(deleted) || 0;
  }
  return stat;
}

/**
 * Each task commit's diff stat as merged into `branch` (by the commit; null when no merge of it is on the
 * branch, e.g. a lost merge). The latest merge of a commit counts (a merge redone after it was lost).
 */
export async function taskDiffStats(
  repo: string,
  base: string,
  branch: string,
  commits: string[],
): Promise<Map<string, DiffStat | null>> {
  const merges = await integrationMerges(repo, base, branch);
  const stats = new Map<string, DiffStat | null>();
  for (const commit of commits) {
    // rev-list lists newest first: the first merge naming the commit is its latest.
    const merge = [...merges].find(([, parents]) => parents.slice(1).includes(commit));
    stats.set(commit, merge ? await diffStat(repo, merge[1][0]!, merge[0]) : null);
  }
  return stats;
}
