/**
 * A saga's integration branch made to lose its newest merge (a task recorded as integrated whose commit the
 * branch no longer contains), as a user's reset or a bad rebase would: what `saga continue` must find.
 */
import { execFileSync } from 'node:child_process';
import { integrationBranch } from '../../src/domain/contract/naming';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** Moves the integration branch back to `commit` (in its worktree when it is checked out in one). */
function resetBranch(repo: string, branch: string, commit: string): void {
  const worktrees = git(repo, 'worktree', 'list', '--porcelain').split('\n\n');
  const checkedOut = worktrees.find((w) => w.includes(`branch refs/heads/${branch}`));
  const dir = checkedOut?.match(/^worktree (.+)$/m)?.[1];
  if (dir) git(dir, 'reset', '-q', '--hard', commit);
  else git(repo, 'branch', '-f', branch, commit);
}

/**
 * Resets saga `name`'s integration branch to before its newest merge; `before` is where it is now,
 * `lostCommit` the merged task commit it lost, `isMerged()` whether the branch contains it again.
 */
export function loseNewestMerge(repo: string, name: string) {
  const branch = integrationBranch(name);
  const [, before, lostCommit] = git(
    repo,
    'rev-list',
    '--merges',
    '--first-parent',
    '-n1',
    '--parents',
    branch,
  ).split(' ');
  resetBranch(repo, branch, before!);
  const isMerged = () => {
    try {
      git(repo, 'merge-base', '--is-ancestor', lostCommit!, branch);
      return true;
    } catch {
      return false;
    }
  };
  return {
    branch,
    before: before!,
    lostCommit: lostCommit!,
    isMerged,
    head: () => git(repo, 'rev-parse', branch),
  };
}
