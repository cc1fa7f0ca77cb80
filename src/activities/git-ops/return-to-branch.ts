/**
 * Putting a task worktree back on its branch when the agent checked out another branch or detached HEAD,
 * keeping the agent's work: commits it made on a detached HEAD and whatever it left uncommitted.
 */
import { archiveRef } from '../../domain/contract/naming';
import { canonical, samplePaths } from './paths';
import { branchHead, fail, headOf, isAncestorCommit, unmergedFiles } from './queries';
import { execGit, identityArgs, runGit, runGitRaw } from './run';
import { stageWork } from './staging';
import { listWorktrees } from './worktrees';

/** The task branch's tip, once the worktree is known to be this task's (else WorktreeConflict). */
async function taskBranchTip(worktree: string, branch: string): Promise<string> {
  const notTheTasks = (why: string) =>
    fail(
      'WorktreeConflict',
      `'${worktree}' is not the worktree of ${branch} (${why}); nothing committed or removed there`,
    );
  const tip = await branchHead(worktree, branch);
  if (!tip) throw notTheTasks(`the branch does not exist`);
  const [entries, target] = await Promise.all([listWorktrees(worktree), canonical(worktree)]);
  const here = entries.find((e) => e.canonicalPath === target);
  if (!here || here.main) throw notTheTasks('not a linked worktree of the repository');
  const elsewhere = entries.find((e) => e.branch === branch);
  if (elsewhere) throw notTheTasks(`the branch is checked out at '${elsewhere.path}'`);
  return tip;
}

/** Commits the agent made that no branch or tag holds: lost with the worktree unless brought along. */
async function strayCommits(worktree: string, head: string): Promise<string[]> {
  const out = await runGit(worktree, [
    'rev-list',
    '--reverse',
    head,
    '--not',
    '--branches',
    '--tags',
    '--remotes',
  ]);
  return out.split('\n').filter(Boolean);
}

/** The commits to bring onto the branch: the stray ones, then a snapshot of everything uncommitted. */
async function workToBringBack(
  worktree: string,
  head: string,
  stray: string[],
  where: string,
  branch: string,
  exclude: readonly string[],
  notes: string[],
): Promise<string[]> {
  // The snapshot is an unreferenced commit; the worktree then goes back to the branch.
  await stageWork(worktree, exclude, notes);
  const tree = (await runGit(worktree, ['write-tree'])).trim();
  const headTree = (await runGit(worktree, ['rev-parse', `${head}^{tree}`])).trim();
  if (tree === headTree) return [...stray];
  const id = await identityArgs(worktree);
  const message = `saga: work left on ${where} of ${branch}`;
  return [...stray, (await runGit(worktree, [...id, 'commit-tree', tree, '-p', head, '-m', message])).trim()];
}

/** Cherry-picks `picks` onto the checked-out branch, keeping them under an archive ref until they apply. */
async function cherryPickOnto(
  worktree: string,
  branch: string,
  picks: string[],
  where: string,
  notes: string[],
) {
  const last = picks[picks.length - 1]!;
  const keep = archiveRef(`${branch}/left-on-${last.slice(0, 12)}`);
  await runGit(worktree, ['update-ref', keep, last], notes);
  await runGit(worktree, ['checkout', '-q', '-f', branch], notes);
  const pick = await runGitRaw(worktree, ['cherry-pick', '--no-commit', ...picks], notes);
  if (pick.code !== 0) {
    await execGit(worktree, ['cherry-pick', '--quit']);
    await runGit(worktree, ['reset', '-q', '--hard', branch], notes);
    throw fail(
      'WorkOffTaskBranch',
      `The agent left '${worktree}' on ${where}, and its work does not apply onto '${branch}' ` +
        `(${(pick.stderr || pick.stdout).trim().split('\n')[0]}); saved as ${keep}, nothing committed`,
    );
  }
  await runGit(worktree, ['update-ref', '-d', keep], notes);
  notes.push(
    `the agent left ${where}; its work (${picks.length} commit(s) or uncommitted change sets) was brought back onto '${branch}'`,
  );
}

/**
 * A detached HEAD that only went forward from the branch moves the branch there; anything else is
 * cherry-picked onto the branch (the work is kept under an archive ref meanwhile). No other ref is ever
 * moved. Fails without committing when the worktree is not this task's or the work does not apply to the
 * branch. `headRef` is what HEAD points at now (empty when detached), never the task branch itself.
 */
export async function returnToTaskBranch(
  worktree: string,
  branch: string,
  headRef: string,
  exclude: readonly string[],
  notes: string[],
): Promise<void> {
  const tip = await taskBranchTip(worktree, branch);
  const where = headRef ? `branch '${headRef.replace(/^refs\/heads\//, '')}'` : 'a detached HEAD';
  const unresolved = await unmergedFiles(worktree);
  if (unresolved.length > 0) {
    throw fail(
      'WorkOffTaskBranch',
      `The agent left '${worktree}' on ${where} with unresolved conflicts (${samplePaths(unresolved)}); ` +
        `nothing committed, '${branch}' is unchanged`,
    );
  }
  const head = await headOf(worktree);
  const stray = await strayCommits(worktree, head);
  const sinceTip = Number((await runGit(worktree, ['rev-list', '--count', head, '--not', tip])).trim());
  if (!headRef && (await isAncestorCommit(worktree, tip, head)) && sinceTip === stray.length) {
    // Only the agent's own commits ahead of the branch: the branch takes them as they are.
    if (head !== tip) await runGit(worktree, ['update-ref', `refs/heads/${branch}`, head, tip], notes);
    await runGit(worktree, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`], notes);
    notes.push(`the agent left ${where}; '${branch}' was moved forward to it (${stray.length} commit(s))`);
    return;
  }
  const picks = await workToBringBack(worktree, head, stray, where, branch, exclude, notes);
  if (picks.length === 0) {
    await runGit(worktree, ['checkout', '-q', '-f', branch], notes);
    notes.push(`the agent left ${where} without changes; back on '${branch}'`);
    return;
  }
  await cherryPickOnto(worktree, branch, picks, where, notes);
}
