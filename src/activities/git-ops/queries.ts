/** Small git queries the activities share: commits, branch heads, merge state, changed paths. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { pathExists } from './paths';
import { execGit, GitError, runGit } from './run';

export const fail = (type: string, message: string) => ApplicationFailure.nonRetryable(message, type);

export async function resolveCommit(cwd: string, rev: string): Promise<string | null> {
  const out = await execGit(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return out.code === 0 ? out.stdout.trim() : null;
}

export async function requireCommit(cwd: string, rev: string, type: string, what: string): Promise<string> {
  const sha = await resolveCommit(cwd, rev);
  if (!sha) throw fail(type, `${what} '${rev}' does not name a commit in ${cwd}`);
  return sha;
}

export const headOf = async (cwd: string) => (await runGit(cwd, ['rev-parse', 'HEAD'])).trim();

export async function branchHead(cwd: string, branch: string): Promise<string | null> {
  return resolveCommit(cwd, `refs/heads/${branch}`);
}

export async function isAncestorCommit(cwd: string, commit: string, of: string): Promise<boolean> {
  const out = await execGit(cwd, ['merge-base', '--is-ancestor', commit, of]);
  if (out.code === 0 || out.code === 1) return out.code === 0;
  throw new GitError(['merge-base', '--is-ancestor', commit, of], cwd, out.code, out.stderr);
}

export async function mergeHead(cwd: string): Promise<string | null> {
  const out = await execGit(cwd, ['rev-parse', '-q', '--verify', 'MERGE_HEAD']);
  return out.code === 0 ? out.stdout.trim() : null;
}

export const splitZ = (out: string) => out.split('\0').filter(Boolean);

/** Paths with uncommitted changes, untracked files included (ignored files are not work). */
export async function dirtyFiles(cwd: string): Promise<string[]> {
  const tokens = splitZ(await runGit(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all']));
  const files: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    files.push(tokens[i].slice(3));
    if (/^[RC]/.test(tokens[i])) i++; // a rename is followed by its original path
  }
  return files;
}

export async function unmergedFiles(cwd: string): Promise<string[]> {
  return splitZ(await runGit(cwd, ['diff', '--name-only', '-z', '--diff-filter=U']));
}

export async function repoToplevel(repo: string): Promise<string> {
  if (!(await pathExists(repo))) throw fail('NotAGitRepo', `Repository folder '${repo}' does not exist`);
  const out = await execGit(repo, ['rev-parse', '--show-toplevel']);
  if (out.code !== 0 || !out.stdout.trim()) {
    throw fail('NotAGitRepo', `'${repo}' is not inside a git repository (${out.stderr.trim()})`);
  }
  return out.stdout.trim();
}

export async function requireWorktreeDir(worktree: string): Promise<string> {
  if (!(await pathExists(worktree))) throw fail('WorktreeMissing', `Worktree '${worktree}' does not exist`);
  await assertWorktreePointer(worktree);
  return worktree;
}

/**
 * A linked worktree's `.git` file must still point at the admin folder git made for it, and that folder
 * back at it: an agent that re-pointed it (at the user's repository, at a folder of its own) would have the
 * worker's git work there. A plain checkout (a `.git` folder) has nothing to check.
 */
export async function assertWorktreePointer(worktree: string): Promise<void> {
  const dotGit = path.join(worktree, '.git');
  const stat = await fs.lstat(dotGit).catch(() => null);
  if (!stat || stat.isDirectory()) return;
  const text = stat.isFile() ? await fs.readFile(dotGit, 'utf8') : '';
  const admin = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  const back = admin
    ? await fs.readFile(path.join(path.resolve(worktree, admin), 'gitdir'), 'utf8').catch(() => '')
    : '';
  const linked =
    admin !== undefined &&
    path.basename(path.dirname(path.resolve(worktree, admin))) === 'worktrees' &&
    (await fs.realpath(path.resolve(back.trim())).catch(() => '')) === (await fs.realpath(dotGit));
  if (!linked) {
    throw fail(
      'WorktreePointerChanged',
      `The worktree '${worktree}' no longer points at its git admin folder (its .git file says ` +
        `'${text.trim().slice(0, 200)}'); saga runs no git there. Remove the worktree and run the task again`,
    );
  }
}
