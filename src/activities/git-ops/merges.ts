/**
 * Milestone integration in its worktree: merging task branches, finishing a merge a resolver agent fixed,
 * aborting one, and reverting the integration to the commit before it.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import { isSagaBranch } from '../../domain/contract/naming';
import { refuseNestedRepos } from './nested-repos';
import { fail, headOf, mergeHead, requireCommit, requireWorktreeDir, splitZ, unmergedFiles } from './queries';
import { execGit, GitError, identityArgs, runGit, runGitRaw } from './run';
import {
  CompleteMergeInputSchema,
  MergeBranchInputSchema,
  parseInput,
  ResetHardInputSchema,
  WorktreeInputSchema,
} from './schemas';

async function conflictMarkerFiles(worktree: string): Promise<string[]> {
  const candidates = new Set([
    ...(await unmergedFiles(worktree)),
    ...splitZ(await runGit(worktree, ['diff', '--name-only', '-z', 'HEAD'])),
    ...splitZ(await runGit(worktree, ['ls-files', '-z', '--others', '--exclude-standard'])),
  ]);
  const marked: string[] = [];
  for (const file of [...candidates].sort()) {
    const content = await fs.readFile(path.join(worktree, file)).catch(() => null);
    if (!content || content.includes(0)) continue; // deleted or binary
    if (/^(<{7}|>{7})( |$)/m.test(content.toString('utf8'))) marked.push(file);
  }
  return marked;
}

/** Merges a task branch; a conflict leaves the merge in progress for a resolver agent. */
export async function mergeBranch(raw: z.input<typeof MergeBranchInputSchema>) {
  const input = parseInput('mergeBranch', MergeBranchInputSchema, raw);
  const worktree = await requireWorktreeDir(input.worktree);
  const notes: string[] = [];
  const [branchCommit, pending, before, id] = await Promise.all([
    requireCommit(worktree, input.branch, 'UnknownBranch', 'Branch'),
    mergeHead(worktree),
    headOf(worktree),
    identityArgs(worktree),
  ]);
  if (pending) {
    if (pending !== branchCommit) {
      throw fail(
        'MergeInProgress',
        `Another merge (${pending.slice(0, 12)}) is in progress in '${worktree}'`,
      );
    }
    // A retry of the same merge: report the conflict again.
    const conflictedFiles = await unmergedFiles(worktree);
    return { status: 'conflict' as const, head: await headOf(worktree), conflictedFiles, notes };
  }
  // Merging a commit HEAD already contains succeeds and leaves HEAD where it was.
  const args = [...id, 'merge', '--no-ff', '--no-edit', '--no-verify', '-m', input.message, branchCommit];
  const out = await runGitRaw(worktree, args, notes);
  const head = await headOf(worktree);
  if (out.code === 0) {
    const status = head === before ? ('already-merged' as const) : ('merged' as const);
    return { status, head, conflictedFiles: [], notes };
  }
  const conflictedFiles = await unmergedFiles(worktree);
  if ((await mergeHead(worktree)) && conflictedFiles.length > 0) {
    return { status: 'conflict' as const, head, conflictedFiles, notes };
  }
  throw fail('MergeFailed', new GitError(args, worktree, out.code, out.stderr || out.stdout).message);
}

/** Finishes a resolved merge; refuses while conflict markers remain. */
export async function completeMerge(raw: z.input<typeof CompleteMergeInputSchema>) {
  const input = parseInput('completeMerge', CompleteMergeInputSchema, raw);
  const worktree = await requireWorktreeDir(input.worktree);
  const notes: string[] = [];
  // The resolver's tree is an agent's: before anything reads its files or stages them.
  const refused = await refuseNestedRepos(worktree, 'HEAD');
  if (refused !== null) {
    return {
      ok: false,
      remainingMarkers: [],
      refused,
      head: await headOf(worktree),
      committed: false,
      notes,
    };
  }
  const remainingMarkers = await conflictMarkerFiles(worktree);
  if (remainingMarkers.length > 0) {
    return { ok: false, remainingMarkers, head: await headOf(worktree), committed: false, notes };
  }
  await runGit(worktree, ['add', '-A'], notes);
  const merging = (await mergeHead(worktree)) !== null;
  const staged = (await runGitRaw(worktree, ['diff', '--cached', '--quiet'], notes)).code === 1;
  if (merging || staged) {
    const id = await identityArgs(worktree);
    await runGit(worktree, [...id, 'commit', '--no-verify', '-q', '-m', input.message], notes);
  }
  return {
    ok: true,
    remainingMarkers,
    head: await headOf(worktree),
    committed: merging || staged,
    notes,
  };
}

export async function abortMerge(raw: z.input<typeof WorktreeInputSchema>) {
  const input = parseInput('abortMerge', WorktreeInputSchema, raw);
  const worktree = await requireWorktreeDir(input.worktree);
  const aborted = (await mergeHead(worktree)) !== null;
  if (aborted) await runGit(worktree, ['merge', '--abort']);
  return { aborted, head: await headOf(worktree) };
}

/**
 * Reverts the integration worktree to the pre-integration commit. Task branches and commits stay in git.
 * Only saga branches are reset, so a wrong path can never discard the user's own work.
 */
export async function resetHard(raw: z.input<typeof ResetHardInputSchema>) {
  const input = parseInput('resetHard', ResetHardInputSchema, raw);
  const worktree = await requireWorktreeDir(input.worktree);
  const commit = await requireCommit(worktree, input.commit, 'UnknownCommit', 'Commit');
  const branch = (await execGit(worktree, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
  if (!isSagaBranch(branch)) {
    throw fail('NotASagaBranch', `Refusing to reset '${worktree}': it is on '${branch || 'detached HEAD'}'`);
  }
  const notes: string[] = [];
  const previousHead = await headOf(worktree);
  await runGit(worktree, ['reset', '--hard', '-q', commit], notes);
  // -ff: a nested repository an agent left goes too (the worktree returns to a commit; nothing untracked
  // in an integration worktree is anyone's work), so removing the worktree later needs no refusal.
  await runGit(worktree, ['clean', '-ffdq'], notes);
  return { head: await headOf(worktree), previousHead, notes };
}
