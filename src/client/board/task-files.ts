/** A saga's files for the board: a task's transcript tail, its diff against the base, and REPORT.md. */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { runGit } from '../../activities/git-ops/run';
import { parseTaskRef } from '../../domain/contract/naming';
import { SAGA_FILES } from '../../domain/contract/saga-dir';
import type { SagaStatus, TaskState } from '../../domain/contract/state';
import { UserError } from '../errors';
import { findTranscript, transcriptTailLines } from '../transcripts';

/** A diff longer than this is cut (the page shows a notice); the branch itself is in git. */
const DIFF_MAX_CHARS = 1024 * 1024;

export class NotFound extends UserError {}

export function findTask(status: SagaStatus, ref: string): TaskState {
  const parsed = parseTaskRef(ref);
  if (!parsed) throw new UserError(`Task '${ref}': expected a form like 1.2.`);
  const task = status.milestones
    .flatMap((m) => m.tasks)
    .find((t) => t.milestone === parsed.milestone && t.task === parsed.task);
  if (!task) throw new NotFound(`Saga '${status.name}' has no task ${ref}.`);
  return task;
}

/** The last `tail` readable lines of the task's newest transcript, as `saga logs` prints them. */
export async function transcriptTail(status: SagaStatus, ref: string, tail: number): Promise<string[]> {
  const task = findTask(status, ref);
  let file: string;
  try {
    file = await findTranscript(status.sagaDir, task.id);
  } catch (error) {
    if (error instanceof UserError) return [];
    throw error;
  }
  return transcriptTailLines(file, tail);
}

/** The task branch's changes since it left the integration branch (`git diff base...task`). */
export async function taskDiff(status: SagaStatus, ref: string): Promise<string> {
  const task = findTask(status, ref);
  let diff: string;
  try {
    diff = await runGit(status.repo, [
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      `${status.integrationBranch}...${task.branch}`,
      '--',
    ]);
  } catch {
    throw new UserError(`No diff for task ${ref} yet: its branch ${task.branch} is not in ${status.repo}.`);
  }
  return diff.length > DIFF_MAX_CHARS ? `${diff.slice(0, DIFF_MAX_CHARS)}\n[diff cut at 1 MiB]\n` : diff;
}

/** REPORT.md of the saga directory, or null before the saga completes. */
export async function reportMarkdown(status: SagaStatus): Promise<string | null> {
  return fs.readFile(path.join(status.sagaDir, SAGA_FILES.report), 'utf8').catch(() => null);
}
