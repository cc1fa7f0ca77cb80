/** Where a saga starts from, and the worktrees of tasks and milestone integrations: create, reuse, remove. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { canonical, listedPaths, matchesCopyEntry, pathExists, samplePaths } from './paths';
import { dirtyFiles, fail, headOf, repoToplevel, resolveCommit } from './queries';
import { execGit, runGit, runGitRaw } from './run';
import {
  CheckRepoInputSchema,
  EnsureIntegrationWorktreeInputSchema,
  parseInput,
  PrepareWorktreeInputSchema,
  RemoveWorktreeInputSchema,
  SetUpWorktreeInputSchema,
} from './schemas';
import { copyIgnoredFiles, runSetup } from './setup';
import { addNewWorktree, ensureWorktree, pruneIfStale } from './worktrees';

const SETUP_PENDING_MARKER = 'saga-setup-pending';

export function createWorktreeActivities(deps: { sagaHome: string }) {
  return {
    /** Where the saga starts from: the repo's toplevel, base branch and commit, and whether it is clean. */
    async checkRepo(raw: z.input<typeof CheckRepoInputSchema>) {
      const input = parseInput('checkRepo', CheckRepoInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      let base = input.base;
      if (!base) {
        const out = await execGit(repo, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
        if (out.code !== 0) {
          throw fail('NoBaseBranch', `'${repo}' is on a detached HEAD: name the base branch explicitly`);
        }
        base = out.stdout.trim();
      }
      const baseCommit = await resolveCommit(repo, base);
      if (!baseCommit) {
        throw fail('UnknownBase', `Base '${base}' does not name a commit in '${repo}' (is the repo empty?)`);
      }
      const dirty = await dirtyFiles(repo);
      return {
        repo,
        base,
        baseCommit,
        clean: dirty.length === 0,
        dirtyFiles: listedPaths(dirty),
        dirtyFileCount: dirty.length,
      };
    },

    /** The task's own worktree and branch; idempotent, setup runs once per created worktree. */
    async prepareWorktree(raw: z.input<typeof PrepareWorktreeInputSchema>) {
      const input = parseInput('prepareWorktree', PrepareWorktreeInputSchema, raw);
      const notes: string[] = [];
      const repoTop = path.resolve(input.repo);
      const added = await addNewWorktree(repoTop, input.branch, input.worktree, input.base, notes);
      const { baseCommit, created } =
        added ??
        (await ensureWorktree(
          await repoToplevel(input.repo),
          input.branch,
          input.worktree,
          input.base,
          notes,
        ));
      let setupPending = false;
      let marker = '';
      if (input.copyFiles.length > 0 || input.setup.length > 0) {
        // The marker survives a crash between `worktree add` and the end of setup, so a retry finishes setup.
        marker = path.join(
          (await runGit(input.worktree, ['rev-parse', '--absolute-git-dir'])).trim(),
          SETUP_PENDING_MARKER,
        );
        if (created) await fs.writeFile(marker, new Date().toISOString());
        setupPending = await pathExists(marker);
      }
      let copy = { copied: [] as string[], skipped: [] as string[] };
      let setupLogs: string[] = [];
      if (setupPending) {
        if (!created) notes.push('finished copy and setup left incomplete by an earlier attempt');
        copy = await copyIgnoredFiles(repoTop, input.worktree, input.copyFiles);
        setupLogs = await runSetup(deps.sagaHome, input.worktree, input.branch, input);
        await fs.rm(marker, { force: true });
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
        setupRan: setupPending && input.setup.length > 0,
        setupLogs,
        notes,
      };
    },

    /**
     * The `worktree.copy` files and set-up commands of a worktree whose content is settled: a milestone's
     * integration sets up after its merges, so the dependencies its tasks added are installed for its checks.
     */
    async setUpWorktree(raw: z.input<typeof SetUpWorktreeInputSchema>) {
      const input = parseInput('setUpWorktree', SetUpWorktreeInputSchema, raw);
      const copy = await copyIgnoredFiles(path.resolve(input.repo), input.worktree, input.copyFiles);
      const setupLogs = await runSetup(deps.sagaHome, input.worktree, input.branch, input);
      return { copiedFiles: copy.copied, skippedFiles: copy.skipped, setupLogs };
    },

    /** Removes a task worktree only when nothing uncommitted is inside (partial-result rule). */
    async removeWorktree(raw: z.input<typeof RemoveWorktreeInputSchema>) {
      const input = parseInput('removeWorktree', RemoveWorktreeInputSchema, raw);
      const notes: string[] = [];
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
          throw fail(
            'NotAWorktree',
            `'${input.worktree}' is not a worktree of '${repoTop}'; not removing it`,
          );
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
    },

    /** The milestone integration worktree: branch from base when missing, reused otherwise. */
    async ensureIntegrationWorktree(raw: z.input<typeof EnsureIntegrationWorktreeInputSchema>) {
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
    },
  };
}
