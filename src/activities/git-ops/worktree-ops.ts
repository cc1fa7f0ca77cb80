/** The worktrees of tasks and milestone integrations: create or reuse, set up, remove. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { refuseNestedRepos } from './nested-repos';
import { canonical, listedPaths, matchesCopyEntry, pathExists, samplePaths } from './paths';
import { dirtyFiles, fail, headOf, repoToplevel } from './queries';
import { runGit, runGitRaw } from './run';
import {
  EnsureIntegrationWorktreeInputSchema,
  parseInput,
  PrepareWorktreeInputSchema,
  RemoveWorktreeInputSchema,
  SetUpWorktreeInputSchema,
} from './schemas';
import { copyIgnoredFiles, runSetup } from './setup';
import { addNewWorktree, ensureWorktree, pruneIfStale } from './worktrees';

const SETUP_PENDING_MARKER = 'saga-setup-pending';

/** Where the set-up commands' logs go: under the saga home. */
export interface SetupDeps {
  sagaHome: string;
}

type PrepareInput = z.output<typeof PrepareWorktreeInputSchema>;

/**
 * Whether copy and set-up are still to run: a marker in the worktree's git dir, written when the worktree
 * is created, survives a crash between `worktree add` and the end of set-up, so a retry finishes it.
 */
async function setupMarker(
  input: PrepareInput,
  created: boolean,
): Promise<{ pending: boolean; marker: string }> {
  if (input.copyFiles.length === 0 && input.setup.length === 0) return { pending: false, marker: '' };
  const gitDir = (await runGit(input.worktree, ['rev-parse', '--absolute-git-dir'])).trim();
  const marker = path.join(gitDir, SETUP_PENDING_MARKER);
  if (created) await fs.writeFile(marker, new Date().toISOString());
  return { pending: await pathExists(marker), marker };
}

/** The task's own worktree and branch; idempotent, setup runs once per created worktree. */
export async function prepareWorktree(raw: z.input<typeof PrepareWorktreeInputSchema>, deps: SetupDeps) {
  const input = parseInput('prepareWorktree', PrepareWorktreeInputSchema, raw);
  const notes: string[] = [];
  const repoTop = path.resolve(input.repo);
  const added = await addNewWorktree(repoTop, input.branch, input.worktree, input.base, notes);
  const { baseCommit, created } =
    added ??
    (await ensureWorktree(await repoToplevel(input.repo), input.branch, input.worktree, input.base, notes));
  const setup = await setupMarker(input, created);
  let copy = { copied: [] as string[], skipped: [] as string[] };
  let setupLogs: string[] = [];
  if (setup.pending) {
    if (!created) notes.push('finished copy and setup left incomplete by an earlier attempt');
    copy = await copyIgnoredFiles(repoTop, input.worktree, input.copyFiles);
    setupLogs = await runSetup(deps.sagaHome, input.worktree, input.branch, input);
    await fs.rm(setup.marker, { force: true });
  }
  return {
    worktree: input.worktree,
    branch: input.branch,
    baseCommit,
    head: added ? baseCommit : await headOf(input.worktree),
    created,
    reused: !created,
    copiedFiles: copy.copied,
    skippedFiles: copy.skipped,
    setupRan: setup.pending && input.setup.length > 0,
    setupLogs,
    notes,
  };
}

/**
 * The `worktree.copy` files and set-up commands of a worktree whose content is settled: a milestone's
 * integration sets up after its merges, so the dependencies its tasks added are installed for its checks.
 */
export async function setUpWorktree(raw: z.input<typeof SetUpWorktreeInputSchema>, deps: SetupDeps) {
  const input = parseInput('setUpWorktree', SetUpWorktreeInputSchema, raw);
  const copy = await copyIgnoredFiles(path.resolve(input.repo), input.worktree, input.copyFiles);
  const setupLogs = await runSetup(deps.sagaHome, input.worktree, input.branch, input);
  return { copiedFiles: copy.copied, skippedFiles: copy.skipped, setupLogs };
}

/** Removes a task worktree only when nothing uncommitted is inside (partial-result rule). */
export async function removeWorktree(raw: z.input<typeof RemoveWorktreeInputSchema>) {
  const input = parseInput('removeWorktree', RemoveWorktreeInputSchema, raw);
  const notes: string[] = [];
  // git's own dirty check (and ours) would read a nested repository; removing it would lose its work.
  const pointer = await fs.lstat(path.join(input.worktree, '.git')).catch(() => null);
  if (pointer?.isFile()) {
    const refused = await refuseNestedRepos(input.worktree, 'HEAD');
    if (refused !== null) throw fail('NestedRepository', `Not removing the worktree: ${refused}`);
  }
  // Without --force git itself refuses a worktree with changes or untracked files, and the main
  // checkout; any refusal takes the careful path below, which names the reason.
  if (await pathExists(input.worktree)) {
    const quick = await runGitRaw(input.repo, ['worktree', 'remove', input.worktree], notes);
    if (quick.code === 0) return { removed: true, notes };
  }
  const repoTop = await repoToplevel(input.repo);
  const target = await canonical(input.worktree);
  const entry = (await pruneIfStale(repoTop, notes)).find((e) => e.canonicalPath === target);
  if (!entry) {
    if (await pathExists(input.worktree)) {
      throw fail('NotAWorktree', `'${input.worktree}' is not a worktree of '${repoTop}'; not removing it`);
    }
    return { removed: false, notes };
  }
  if (entry.main) throw fail('NotAWorktree', `'${input.worktree}' is the repository's main checkout`);
  const dirty = (await dirtyFiles(entry.path)).filter((f) => !matchesCopyEntry(f, input.copies));
  if (dirty.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `Worktree '${input.worktree}' has uncommitted changes (${samplePaths(dirty, 20)}); ` +
        'commit a handoff before removing it',
      'UncommittedWork',
      { dirtyFiles: listedPaths(dirty), dirtyFileCount: dirty.length },
    );
  }
  await runGit(repoTop, ['worktree', 'remove', '--force', entry.path], notes);
  await runGit(repoTop, ['worktree', 'prune'], notes);
  return { removed: true, notes };
}

/** The milestone integration worktree: branch from base when missing, reused otherwise. */
export async function ensureIntegrationWorktree(raw: z.input<typeof EnsureIntegrationWorktreeInputSchema>) {
  const input = parseInput('ensureIntegrationWorktree', EnsureIntegrationWorktreeInputSchema, raw);
  const notes: string[] = [];
  const repoTop = await repoToplevel(input.repo);
  const { created } = await ensureWorktree(repoTop, input.branch, input.worktree, input.base, notes);
  return {
    worktree: input.worktree,
    branch: input.branch,
    head: await headOf(input.worktree),
    created,
    notes,
  };
}
