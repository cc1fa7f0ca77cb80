/**
 * Reconciliation when a saga continues: what git says about each task (branch, recorded commit, merge into
 * the integration branch, worktree), and where that differs from the saga's record.
 */
import type { z } from 'zod';
import { branchHead, isAncestorCommit, repoToplevel, resolveCommit } from './queries';
import { parseInput, ReconcileGitInputSchema } from './schemas';
import { sagaWorktrees } from './saga-worktrees';

type ReconcileInput = z.output<typeof ReconcileGitInputSchema>;
type RecordedTask = ReconcileInput['tasks'][number];
type SagaWorktree = Awaited<ReturnType<typeof sagaWorktrees>>[number];

/** A difference from the record, about a task (its key) or, with a null key, the saga. */
export interface GitFinding {
  key: string | null;
  text: string;
}

/** One task's state in git, and its differences from the record (pushed to `found`). */
async function reconcileTask(
  repo: string,
  task: RecordedTask,
  integration: { branch: string; head: string | null },
  worktrees: SagaWorktree[],
  found: (text: string) => void,
) {
  const head = await branchHead(repo, task.branch);
  const commit = task.commit ? await resolveCommit(repo, task.commit) : null;
  const wt = worktrees.find((w) => w.branch === task.branch);
  const subject = commit ?? (task.commit ? null : head);
  const merged = !!(subject && integration.head && (await isAncestorCommit(repo, subject, integration.head)));
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
  if (task.expectMerged && !merged)
    found(`recorded as integrated but not merged into '${integration.branch}'`);
  if (wt && !wt.exists) found(`worktree '${wt.path}' is registered but its folder is missing`);
  if (wt && wt.dirtyFiles.length > 0) found(`worktree '${wt.path}' has uncommitted changes`);
  return {
    key: task.key,
    branch: task.branch,
    branchExists: head !== null,
    branchHead: head,
    commitExists: commit !== null,
    mergedIntoIntegration: merged,
    worktreeExists: !!wt?.exists,
    worktreePath: wt?.path ?? null,
    worktreeDirty: !!wt && wt.dirtyFiles.length > 0,
  };
}

/** What git says about each task, for continuing a saga; differences from the record are listed. */
export async function reconcileGit(raw: z.input<typeof ReconcileGitInputSchema>) {
  const input = parseInput('reconcileGit', ReconcileGitInputSchema, raw);
  const repo = await repoToplevel(input.repo);
  const findings: GitFinding[] = [];
  const integrationHead = await branchHead(repo, input.integrationBranch);
  const integration = { branch: input.integrationBranch, head: integrationHead };
  const worktrees = await sagaWorktrees(repo, input.sagaName);
  const tasks = [];
  for (const task of input.tasks) {
    const found = (text: string) => findings.push({ key: task.key, text });
    tasks.push(await reconcileTask(repo, task, integration, worktrees, found));
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
}
