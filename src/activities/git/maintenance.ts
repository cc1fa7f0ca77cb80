/**
 * Branch bookkeeping around a saga: moving a task branch to redo it, ancestry and HEAD queries, the saga's
 * worktrees (listed, cleaned up), reconciliation with the record when a saga continues, and the final
 * fast-forward of the base branch.
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
  CleanupSagaWorktreesInputSchema,
  FastForwardBaseInputSchema,
  IsAncestorInputSchema,
  parseInput,
  ReconcileGitInputSchema,
  ResetTaskBranchInputSchema,
  SagaWorktreesInputSchema,
  WorktreeInputSchema,
} from './schemas';
import { assertValidBranchName, listWorktrees, pruneIfStale, sagaWorktrees } from './worktrees';

export function createMaintenanceActivities() {
  return {
    /**
     * Moves a task branch to `to` (e.g. the integrated state it must be redone on), keeping its old tip under
     * `archiveRef` so no work is lost. Idempotent: a retry finds the archive already written and the branch
     * already moved. Refuses while the branch is checked out in a worktree.
     */
    async resetTaskBranch(raw: z.input<typeof ResetTaskBranchInputSchema>) {
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
    },

    async headCommit(raw: z.input<typeof WorktreeInputSchema>) {
      const input = parseInput('headCommit', WorktreeInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const branch = (await execGit(worktree, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
      return { commit: await headOf(worktree), branch: branch || null };
    },

    async isAncestor(raw: z.input<typeof IsAncestorInputSchema>) {
      const input = parseInput('isAncestor', IsAncestorInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      const commit = await requireCommit(repo, input.commit, 'UnknownCommit', 'Commit');
      const of = await requireCommit(repo, input.of, 'UnknownCommit', 'Commit');
      return { ancestor: await isAncestorCommit(repo, commit, of) };
    },

    /** Worktrees whose branch belongs to the saga (`saga/<name>/...`). */
    async listSagaWorktrees(raw: z.input<typeof SagaWorktreesInputSchema>) {
      const input = parseInput('listSagaWorktrees', SagaWorktreesInputSchema, raw);
      const entries = await sagaWorktrees(await repoToplevel(input.repo), input.sagaName);
      return entries.map((e) => ({
        path: e.path,
        branch: e.branch ?? '',
        dirty: e.dirtyFiles.length > 0,
        exists: e.exists,
      }));
    },

    /** Removes the saga's clean worktrees; dirty ones are kept (unless forced) and reported. */
    async cleanupSagaWorktrees(raw: z.input<typeof CleanupSagaWorktreesInputSchema>) {
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
        } else {
          await runGit(repoTop, ['worktree', 'remove', '--force', e.path], notes);
          removed.push(e.path);
        }
      }
      if (removed.length > 0) await runGit(repoTop, ['worktree', 'prune'], notes);
      return { removed, kept, notes };
    },

    /** What git says about each task, for continuing a saga; differences from the record are listed. */
    async reconcileGit(raw: z.input<typeof ReconcileGitInputSchema>) {
      const input = parseInput('reconcileGit', ReconcileGitInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      /** Differences from the record, each about a task (its key) or, with a null key, the saga. */
      const findings: { key: string | null; text: string }[] = [];
      const integrationHead = await branchHead(repo, input.integrationBranch);
      const worktrees = await sagaWorktrees(repo, input.sagaName);
      const tasks = [];
      for (const task of input.tasks) {
        const found = (text: string) => findings.push({ key: task.key, text });
        const head = await branchHead(repo, task.branch);
        const commit = task.commit ? await resolveCommit(repo, task.commit) : null;
        const wt = worktrees.find((w) => w.branch === task.branch);
        const subject = commit ?? (task.commit ? null : head);
        const merged = !!(
          subject &&
          integrationHead &&
          (await isAncestorCommit(repo, subject, integrationHead))
        );
        const short = task.commit?.slice(0, 12);
        if (task.commit && !head) found(`branch '${task.branch}' is missing`);
        if (task.commit && !commit) found(`recorded commit ${short} does not exist in the repository`);
        if (commit && head && commit !== head) {
          found(
            (await isAncestorCommit(repo, commit, head))
              ? `branch '${task.branch}' has commits after the recorded handoff ${short}`
              : `branch '${task.branch}' does not contain the recorded commit ${short}`,
          );
        }
        if (task.expectMerged && !merged) {
          found(`recorded as integrated but not merged into '${input.integrationBranch}'`);
        }
        if (wt && !wt.exists) found(`worktree '${wt.path}' is registered but its folder is missing`);
        if (wt && wt.dirtyFiles.length > 0) found(`worktree '${wt.path}' has uncommitted changes`);
        tasks.push({
          key: task.key,
          branch: task.branch,
          branchExists: head !== null,
          branchHead: head,
          commitExists: commit !== null,
          mergedIntoIntegration: merged,
          worktreeExists: !!wt?.exists,
          worktreePath: wt?.path ?? null,
          worktreeDirty: !!wt && wt.dirtyFiles.length > 0,
        });
      }
      const known = new Set([...input.tasks.map((t) => t.branch), input.integrationBranch]);
      for (const w of worktrees.filter((w) => !known.has(w.branch ?? ''))) {
        findings.push({
          key: null,
          text: `worktree '${w.path}' (branch '${w.branch}') belongs to no known task`,
        });
      }
      return {
        tasks,
        integrationBranchExists: integrationHead !== null,
        integrationHead,
        findings,
        discrepancies: findings.map((f) => (f.key ? `${f.key}: ${f.text}` : f.text)),
      };
    },

    /** Moves the base branch to the integrated result, only as a fast-forward. */
    async fastForwardBase(raw: z.input<typeof FastForwardBaseInputSchema>) {
      const input = parseInput('fastForwardBase', FastForwardBaseInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      const baseHead = await branchHead(repo, input.base);
      const target = await branchHead(repo, input.integrationBranch);
      if (!baseHead) return { ok: false, reason: `base branch '${input.base}' does not exist` };
      if (!target)
        return { ok: false, reason: `integration branch '${input.integrationBranch}' does not exist` };
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
    },
  };
}
