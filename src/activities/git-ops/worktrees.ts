/** The repository's worktree registrations: listing, pruning stale ones, creating or reusing a worktree. */
import { promises as fs } from 'node:fs';
import { canonical, pathExists } from './paths';
import { branchHead, fail, requireCommit, resolveCommit } from './queries';
import { execGit, runGit, runGitRaw } from './run';

export interface WorktreeEntry {
  path: string;
  canonicalPath: string;
  head: string | null;
  branch: string | null;
  exists: boolean;
  main: boolean;
}

export async function listWorktrees(repo: string): Promise<WorktreeEntry[]> {
  const blocks = (await runGit(repo, ['worktree', 'list', '--porcelain'])).split(/\n\n+/).filter(Boolean);
  return Promise.all(
    blocks.map(async (block, index) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((line) => line.startsWith(`${name} `))
          ?.slice(name.length + 1) ?? null;
      const wtPath = field('worktree') ?? '';
      return {
        path: wtPath,
        canonicalPath: await canonical(wtPath),
        head: field('HEAD'),
        branch: field('branch')?.replace(/^refs\/heads\//, '') ?? null,
        exists: await pathExists(wtPath),
        main: index === 0,
      };
    }),
  );
}

/** Drops registrations whose folder was deleted, so the path or branch can be used again. */
export async function pruneIfStale(repo: string, notes: string[]): Promise<WorktreeEntry[]> {
  const entries = await listWorktrees(repo);
  if (entries.every((e) => e.exists)) return entries;
  await runGit(repo, ['worktree', 'prune'], notes);
  const stale = entries.filter((e) => !e.exists).map((e) => e.path);
  notes.push(`pruned stale worktree registration(s): ${stale.join(', ')}`);
  return listWorktrees(repo);
}

export async function assertValidBranchName(cwd: string, branch: string): Promise<void> {
  const out = await execGit(cwd, ['check-ref-format', '--branch', branch]);
  if (out.code !== 0) throw fail('InvalidInput', `'${branch}' is not a valid branch name`);
}

/**
 * The common case in one git process: neither the folder nor the branch exists yet. Returns null when that
 * is not so (or git refuses for any other reason), and the caller takes the careful path, which explains.
 */
export async function addNewWorktree(
  repo: string,
  branch: string,
  worktree: string,
  base: string,
  notes: string[],
): Promise<{ baseCommit: string; created: true } | null> {
  if (await pathExists(worktree)) return null;
  const [add, baseCommit] = await Promise.all([
    runGitRaw(repo, ['worktree', 'add', '--quiet', '-b', branch, worktree, base], notes),
    resolveCommit(repo, base),
  ]);
  if (add.code !== 0 || !baseCommit) return null;
  return { baseCommit, created: true };
}

/**
 * Creates or reuses the worktree of `branch` at `worktree`. Reuse when already there; `worktree add` of an
 * existing branch; otherwise a new branch from the base commit.
 */
export async function ensureWorktree(
  repoTop: string,
  branch: string,
  worktree: string,
  base: string,
  notes: string[],
): Promise<{ baseCommit: string; created: boolean }> {
  await assertValidBranchName(repoTop, branch);
  const baseCommit = await requireCommit(repoTop, base, 'UnknownBase', 'Base');
  const entries = await pruneIfStale(repoTop, notes);
  const target = await canonical(worktree);
  const atPath = entries.find((e) => e.canonicalPath === target);
  if (atPath) {
    if (atPath.branch === branch) return { baseCommit, created: false };
    throw fail(
      'WorktreeConflict',
      `'${worktree}' is already a worktree of ${atPath.branch ?? 'a detached HEAD'}, not of '${branch}'`,
    );
  }
  const elsewhere = entries.find((e) => e.branch === branch);
  if (elsewhere) {
    throw fail('BranchCheckedOut', `Branch '${branch}' is already checked out at '${elsewhere.path}'`);
  }
  if ((await pathExists(worktree)) && (await fs.readdir(worktree)).length > 0) {
    throw fail('PathOccupied', `'${worktree}' exists, is not empty and is not a worktree of this repository`);
  }
  const args = (await branchHead(repoTop, branch))
    ? ['worktree', 'add', worktree, branch]
    : ['worktree', 'add', '-b', branch, worktree, baseCommit];
  await runGit(repoTop, args, notes);
  return { baseCommit, created: true };
}
