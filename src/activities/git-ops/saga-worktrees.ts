/** One saga's worktrees (those of its `saga/<name>/...` branches): listed, cleaned up. */
import type { z } from 'zod';
import { sagaBranchPrefix } from '../../domain/contract/naming';
import { refuseNestedRepos } from './nested-repos';
import { dirtyFiles, repoToplevel } from './queries';
import { runGit } from './run';
import { CleanupSagaWorktreesInputSchema, parseInput, SagaWorktreesInputSchema } from './schemas';
import { listWorktrees, pruneIfStale } from './worktrees';

/** The worktrees whose branch belongs to the saga, with their uncommitted paths. */
export async function sagaWorktrees(repoTop: string, name: string) {
  const prefix = sagaBranchPrefix(name);
  const entries = (await listWorktrees(repoTop)).filter((e) => e.branch?.startsWith(prefix));
  return Promise.all(
    entries.map(async (e) => {
      const dirty = e.exists ? await dirtyFiles(e.path) : [];
      return { ...e, dirtyFiles: dirty };
    }),
  );
}

/** Worktrees whose branch belongs to the saga. */
export async function listSagaWorktrees(raw: z.input<typeof SagaWorktreesInputSchema>) {
  const input = parseInput('listSagaWorktrees', SagaWorktreesInputSchema, raw);
  const entries = await sagaWorktrees(await repoToplevel(input.repo), input.sagaName);
  return entries.map((e) => ({
    path: e.path,
    branch: e.branch ?? '',
    dirty: e.dirtyFiles.length > 0,
    exists: e.exists,
  }));
}

/** Removes the saga's clean worktrees; dirty ones are kept (unless forced) and reported. */
export async function cleanupSagaWorktrees(raw: z.input<typeof CleanupSagaWorktreesInputSchema>) {
  const input = parseInput('cleanupSagaWorktrees', CleanupSagaWorktreesInputSchema, raw);
  const repoTop = await repoToplevel(input.repo);
  const notes: string[] = [];
  await pruneIfStale(repoTop, notes);
  const removed: string[] = [];
  const kept: { path: string; reason: string }[] = [];
  for (const e of await sagaWorktrees(repoTop, input.sagaName)) {
    if (e.main) {
      kept.push({ path: e.path, reason: 'the repository main checkout is never removed' });
    } else if (e.dirtyFiles.length > 0 && !input.force) {
      kept.push({ path: e.path, reason: `uncommitted changes: ${e.dirtyFiles.slice(0, 10).join(', ')}` });
    } else if (!input.force && e.exists && (await refuseNestedRepos(e.path, 'HEAD')) !== null) {
      // git's status does not look inside one: its work would go with the worktree.
      kept.push({ path: e.path, reason: 'it holds a nested git repository (a task refused at its handoff)' });
    } else {
      await runGit(repoTop, ['worktree', 'remove', '--force', e.path], notes);
      removed.push(e.path);
    }
  }
  if (removed.length > 0) await runGit(repoTop, ['worktree', 'prune'], notes);
  return { removed, kept, notes };
}
