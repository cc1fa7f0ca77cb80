/**
 * One worker task (docs/PROCEDURE.md §3.3-§3.9): its own worktree and branch, the agent in a
 * fix→validate loop (attempt → checks), the quality-locked review, a durable handoff (a commit on the task
 * branch), and only then the worktree's removal. A task that stays blocked goes back to the fleet, which
 * re-delegates it, adjusts its spec or asks the user (implementation.ts).
 * The history stays small: prompts, transcripts and check output live in files; history holds paths.
 * Each attempt is one activity (worktree set-up on the first, handoff on the last), so a task costs few
 * workflow-task round trips.
 */
import { log, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { TaskReport } from '../../domain/fleet/fleet';
import { budgetGrantSignal, interactionAnsweredSignal } from '../../domain/saga/messages';
import { recordAnswer } from '../ask';
import { TaskDelegation } from './task-delegation';
import type { TaskInput } from './task-input';
import { PATCHES } from '../patches';
import { sagaLog } from '../shared';

export type { TaskInput };

export type { TaskReport };

export async function taskWorkflow(input: TaskInput): Promise<TaskReport> {
  const task = new TaskDelegation(input);
  // The task's API: answers to its questions (review, spec adjustment) and, for a task with a budget, the
  // fleet's budget updates. Registered before the first await: no message waits in a buffer.
  setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer));
  if (input.budget) setHandler(budgetGrantSignal, (grant) => task.budgetGranted(grant));
  if (task.deviation) {
    log.warn(task.deviation);
    if (patched(PATCHES.confinedTaskProfiles)) await sagaLog(input.ctx, task.deviation);
  }
  if (input.resetBranch) await task.resetBranch(input.resetBranch);
  try {
    const adjusted = input.adjustSpec ? await task.adjustSpec(input.adjustSpec) : true;
    if (adjusted) await task.attemptUntilDone();
    if (task.run.status === 'passed' && input.ctx.flags.quality_locked) await task.review();
  } finally {
    // Durable handoff even when cancelled or failed: commit what is there, then remove the worktree.
    await task.handOff();
  }
  return task.run.report(workflowInfo(), task.profile.name);
}
