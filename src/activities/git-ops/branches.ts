/**
 * Branch bookkeeping around a saga: moving a task branch to redo it, ancestry and HEAD queries, and the
 * final fast-forward of the base branch.
 */
import type { z } from 'zod';
import {
  branchHead,
  fail,
  headOf,
  isAncestorCommit,
  repoToplevel,
  requireCommit,
  requireWorktreeDir,
  resolveCommit,
} from './queries';
import { execGit, runGit, runGitRaw } from './run';
import {
  FastForwardBaseInputSchema,
  IsAncestorInputSchema,
  parseInput,
  ResetTaskBranchInputSchema,
  WorktreeInputSchema,
} from './schemas';
import { assertValidBranchName, listWorktrees, pruneIfStale } from './worktrees';

/**
 * Moves a task branch to `to` (e.g. the integrated state it must be redone on), keeping its old tip under
 * `archiveRef` so no work is lost. Idempotent: a retry finds the archive already written and the branch
 * already moved. Refuses while the branch is checked out in a worktree.
 */
export async function resetTaskBranch(raw: z.input<typeof ResetTaskBranchInputSchema>) {
  const input = parseInput('resetTaskBranch', ResetTaskBranchInputSchema, raw);
  const repo = await repoToplevel(input.repo);
  await assertValidBranchName(repo, input.branch);
  const notes: string[] = [];
  const to = await requireCommit(repo, input.to, 'UnknownCommit', 'Target');
  const checkedOut = (await pruneIfStale(repo, notes)).find((e) => e.branch === input.branch);
  if (checkedOut) {
    throw fail('BranchCheckedOut', `Branch '${input.branch}' is checked out at '${checkedOut.path}'`);
  }
  const previous = await branchHead(repo, input.branch);
  const archived = await resolveCommit(repo, input.archiveRef);
  if (previous && previous !== to && !archived) {
    await runGit(repo, ['update-ref', input.archiveRef, previous, ''], notes);
  }
  if (previous !== to) await runGit(repo, ['update-ref', `refs/heads/${input.branch}`, to], notes);
  return { branch: input.branch, head: to, previousHead: previous, archiveRef: input.archiveRef, notes };
}

export async function headCommit(raw: z.input<typeof WorktreeInputSchema>) {
  const input = parseInput('headCommit', WorktreeInputSchema, raw);
  const worktree = await requireWorktreeDir(input.worktree);
  const branch = (await execGit(worktree, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
  return { commit: await headOf(worktree), branch: branch || null };
}

export async function isAncestor(raw: z.input<typeof IsAncestorInputSchema>) {
  const input = parseInput('isAncestor', IsAncestorInputSchema, raw);
  const repo = await repoToplevel(input.repo);
  const commit = await requireCommit(repo, input.commit, 'UnknownCommit', 'Commit');
  const of = await requireCommit(repo, input.of, 'UnknownCommit', 'Commit');
  return { ancestor: await isAncestorCommit(repo, commit, of) };
}

/** Moves the base branch to the integrated result, only as a fast-forward. */
export async function fastForwardBase(raw: z.input<typeof FastForwardBaseInputSchema>) {
  const input = parseInput('fastForwardBase', FastForwardBaseInputSchema, raw);
  const repo = await repoToplevel(input.repo);
  const baseHead = await branchHead(repo, input.base);
  const target = await branchHead(repo, input.integrationBranch);
  if (!baseHead) return { ok: false, reason: `base branch '${input.base}' does not exist` };
  if (!target) return { ok: false, reason: `integration branch '${input.integrationBranch}' does not exist` };
  if (baseHead === target) return { ok: true, reason: 'already up to date' };
  if (!(await isAncestorCommit(repo, baseHead, target))) {
    return {
      ok: false,
      reason: `'${input.base}' has moved on: it is not an ancestor of the integration`,
    };
  }
  const checkedOut = (await listWorktrees(repo)).find((e) => e.branch === input.base);
  if (checkedOut) {
    // Moving the ref under a checkout would desynchronise its files: let git fast-forward it instead.
    const out = await runGitRaw(checkedOut.path, ['merge', '--ff-only', '-q', target]);
    if (out.code !== 0) {
      return { ok: false, reason: `fast-forward in '${checkedOut.path}' failed: ${out.stderr.trim()}` };
    }
  } else {
    await runGit(repo, ['update-ref', `refs/heads/${input.base}`, target, baseHead]);
  }
  return { ok: true, reason: `fast-forwarded '${input.base}' to ${target.slice(0, 12)}` };
}
