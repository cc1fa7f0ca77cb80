/**
 * `saga continue` redoing a lost merge: a task the record says is integrated whose commit is not in the
 * integration branch is merged again, the way milestone integration merged it. A conflict is aborted and
 * reported (nothing is left half-merged); the saga's worktrees are used where they are.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { abortMerge, mergeBranch } from './merges';
import { repoToplevel } from './queries';
import { runGit } from './run';
import { sagaWorktrees } from './saga-worktrees';

export interface RedoMergeInput {
  repo: string;
  sagaName: string;
  integrationBranch: string;
  /** The task's recorded handoff commit. */
  commit: string;
  message: string;
}

export type RedoMergeResult =
  { status: 'merged' | 'already-merged'; head: string } | { status: 'conflict'; conflictedFiles: string[] };

/** Merges the commit into the integration branch, in its worktree, or in a temporary one when it has none. */
export async function redoMerge(input: RedoMergeInput): Promise<RedoMergeResult> {
  const repo = await repoToplevel(input.repo);
  const existing = (await sagaWorktrees(repo, input.sagaName)).find(
    (w) => w.branch === input.integrationBranch && w.exists,
  );
  const temp = existing ? null : await mkdtemp(path.join(os.tmpdir(), 'saga-redo-merge-'));
  const worktree = existing?.path ?? path.join(temp!, 'integration');
  try {
    if (!existing) await runGit(repo, ['worktree', 'add', '--quiet', worktree, input.integrationBranch]);
    const merged = await mergeBranch({ worktree, branch: input.commit, message: input.message });
    if (merged.status !== 'conflict') return { status: merged.status, head: merged.head };
    await abortMerge({ worktree });
    return { status: 'conflict', conflictedFiles: merged.conflictedFiles };
  } finally {
    if (temp) {
      await runGit(repo, ['worktree', 'remove', '--force', worktree]).catch(() => undefined);
      await rm(temp, { recursive: true, force: true });
    }
  }
}
