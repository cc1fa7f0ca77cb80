/**
 * The user's part in a blocked task (docs/PROCEDURE.md §3.10-§3.12): the escalation or spec gap question
 * the fleet asks while the other tasks keep running, and what it does with the answer. A change of the
 * agreed spec is kept with the task, logged as a deviation and written to decisions.md, never applied
 * silently.
 */
import { patched } from '@temporalio/workflow';
import {
  escalationQuestion,
  gapClarification,
  specGap,
  specGapDecision,
  specGapNote,
  specGapQuestion,
} from '../../domain/fleet/blocked-report';
import type { TaskReport } from '../../domain/fleet/fleet';
import { ASKED_STREAK, retainedAfterEscalation, specChangeOf } from '../../domain/fleet/fleet-run';
import { specChangeDecision, withSpecChange } from '../../domain/fleet/spec-changes';
import { specEditChange } from '../../domain/fleet/spec-edit';
import type { Answer, SpecChange, TaskState } from '../../domain/contract/state';
import { quickActivities } from '../activity-proxies';
import { ask } from '../ask';
import type { Fleet } from './fleet';
import { PATCHES } from '../patches';

/** The user's answers about blocked tasks, for the fleet (its `answers` part). */
export class FleetAnswers {
  constructor(private readonly fleet: Fleet) {}

  /** Asks the user about a task that stays blocked; the answer comes back as a fleet event. */
  askAboutBlocked(task: TaskState, rep: TaskReport | null, reason: string, retryable: boolean): void {
    const { ctx, state } = this.fleet;
    const adjusted = state.adjustedLastTime(task.id);
    if (adjusted)
      state.log(`Task ${task.id} did not converge despite re-delegation and spec adjustment: ${reason}`);
    const evidence = task.evidence.join(', ') || 'none';
    const gap = rep?.agentBlocked ? specGap(rep.agentBlocked) : null;
    if (gap !== null) {
      // A spec gap is the user's to close: asked as a question, the answer goes to the next delegation.
      // The agent's options reach the question only in runs that know them (older histories replay as asked).
      const offered = rep?.gapOptions && patched(PATCHES.specGapOptions) ? rep.gapOptions : null;
      void ask(ctx.sagaWorkflowId, specGapQuestion(task, gap, offered)).then(
        (answer) => state.events.push({ type: 'spec-gap', ref: task.id, gap, answer }),
        () => undefined, // cancelled with the workflow; the main loop sees the cancellation itself
      );
      return;
    }
    const blocker = {
      agentBlocked: rep?.agentBlocked,
      reviewEscalated: rep?.reviewStop === 'escalated',
      adjusted,
      retryable,
      reason,
      evidence,
    };
    void ask(ctx.sagaWorkflowId, escalationQuestion(task, blocker)).then(
      (answer) => state.events.push({ type: 'escalation', ref: task.id, answer }),
      () => undefined, // cancelled with the workflow; the main loop sees the cancellation itself
    );
  }

  /** Acts on the answer to an escalation (retry, edit the spec, skip, abort); returns true when the user aborted. */
  async onEscalation(task: TaskState, answer: Answer): Promise<boolean> {
    const { state } = this.fleet;
    const choice = answer.choice;
    state.log(`Escalation of ${task.id} answered by ${answer.user}: ${choice}`);
    if (choice === 'abort') return true;
    if (choice === 'skip') {
      state.update(task, { status: 'skipped' });
      return false;
    }
    if (choice === 'edit')
      await this.keepSpecChange(
        task,
        // The edit's fields (checks, scope, interfaces) change the spec; older histories kept a note only.
        patched(PATCHES.specEditFields) ? specEditChange(answer) : specChangeOf('edit', answer),
        `${answer.user} answered ${answer.interactionId} with ${answer.choice}.`,
      );
    state.retained.set(task.id, retainedAfterEscalation(answer, task.evidence));
    state.blockedStreak.set(task.id, ASKED_STREAK);
    state.update(task, { status: 'pending' });
    return false;
  }

  /**
   * Acts on the answer to a spec gap question; returns true when the user aborted. The answer is a change
   * of the agreed spec, so it is logged as a deviation and written to decisions.md.
   */
  async resolveSpecGap(task: TaskState, gap: string, answer: Answer): Promise<boolean> {
    const { state } = this.fleet;
    if (answer.choice === 'abort') {
      state.log(`Spec gap of task ${task.id} answered by ${answer.user}: abort`);
      return true;
    }
    const entry = specGapDecision(task, gap, answer);
    state.log(entry.title);
    await this.recordDecision(entry);
    if (answer.choice === 'skip') {
      state.update(task, { status: 'skipped' });
      return false;
    }
    const clarified = gapClarification(answer);
    const clarification = { ...answer, text: `${gap} — ${clarified}` };
    state.update(task, { specChanges: withSpecChange(task, specChangeOf('spec-gap', clarification)) });
    state.retained.set(task.id, {
      evidence: task.evidence,
      notes: [specGapNote(gap, answer.user, clarified)],
    });
    state.blockedStreak.set(task.id, ASKED_STREAK);
    state.update(task, { status: 'pending', reason: null });
    return false;
  }

  /**
   * A change to a task's spec: kept with the task (every later attempt gets it, its spec file lists it),
   * logged as a deviation and written to decisions.md.
   */
  async keepSpecChange(task: TaskState, change: SpecChange, how: string): Promise<void> {
    const { state } = this.fleet;
    state.update(task, { specChanges: withSpecChange(task, change) });
    const entry = specChangeDecision(task, change, how);
    state.log(entry.title);
    await this.recordDecision(entry);
  }

  private async recordDecision(entry: { at: string; title: string; lines: string[] }): Promise<void> {
    const { ctx } = this.fleet;
    await quickActivities(ctx.hostQueue)
      .prependDecision({ sagaDir: ctx.sagaDir, entry })
      .catch(() => undefined); // the log line records it as well
  }
}
