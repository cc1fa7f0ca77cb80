/**
 * A task that stopped on checks that cannot run (126/127): the user is asked about each check at once,
 * while the other tasks keep running, and the answers change the task's checks (a spec change, logged as a
 * deviation and written to decisions.md) before its next delegation.
 */
import { currentTaskSpec } from '../../domain/fleet/spec-changes';
import {
  applyUnrunnableAnswers,
  milestoneUnrunnableQuestions,
  unrunnableChange,
  unrunnableQuestions,
  type UnrunnableCheck,
} from '../../domain/fleet/unrunnable-checks';
import type { PlanMilestone } from '../../domain/plan';
import type { TaskState } from '../../domain/contract/state';
import { quickActivities } from '../activity-proxies';
import { askAll } from '../ask';
import type { Fleet } from './fleet';
import type { FleetEvent } from './fleet-state';

/** Checks that cannot run, asked about for the fleet (its `checks` part). */
export class CheckQuestions {
  constructor(private readonly fleet: Fleet) {}

  /** A task stopped on checks that cannot run: each is asked at once; the answers come back as a fleet event. */
  askAboutTask(task: TaskState, checks: UnrunnableCheck[]): void {
    const { ctx, state } = this.fleet;
    state.log(
      `Task ${task.id}: ${checks.map((c) => `\`${c.check}\``).join(', ')} cannot run here (exit ${checks.map((c) => c.exitCode).join(', ')}); asking the user before any further attempt`,
    );
    const evidence = task.evidence.join(', ') || 'none';
    void askAll(ctx.sagaWorkflowId, unrunnableQuestions(task, checks, evidence)).then(
      (answers) => state.events.push({ type: 'unrunnable', ref: task.id, checks, answers }),
      () => undefined, // cancelled with the workflow; the main loop sees the cancellation itself
    );
  }

  /** The answers change the task's checks (a spec change); its next delegation runs them. */
  async onTaskAnswers(
    spec: PlanMilestone,
    task: TaskState,
    event: Extract<FleetEvent, { type: 'unrunnable' }>,
  ): Promise<void> {
    const { state, answers } = this.fleet;
    const planned = spec.tasks.find((t) => t.id === task.task);
    if (!planned) return;
    const change = unrunnableChange(currentTaskSpec(planned, task.specChanges), event.checks, event.answers);
    const asked = event.answers.map((a) => `${a.interactionId}: ${a.choice}`).join(', ');
    await answers.keepSpecChange(task, change, `its checks could not run; ${change.by} answered ${asked}.`);
    state.retained.set(task.id, {
      evidence: task.evidence,
      notes: [`Your task's checks were changed after they could not run here: ${change.text}`],
    });
    // The checks the next delegation runs are new: it starts a fresh blocked streak.
    state.blockedStreak.delete(task.id);
    state.update(task, { status: 'pending', reason: null });
  }

  /**
   * A milestone's validation checks that cannot run: asked at once (no task is redone for them), and the
   * answers change the milestone's checks for its next integration, logged as a deviation and in decisions.md.
   */
  async askAboutMilestone(
    spec: PlanMilestone,
    found: { checks: UnrunnableCheck[]; evidence: string[] },
    asked: number,
  ): Promise<void> {
    const { ctx, state, round } = this.fleet;
    const evidence = found.evidence.join(', ') || 'none';
    const answers = await askAll(
      ctx.sagaWorkflowId,
      milestoneUnrunnableQuestions(spec, round, asked, found.checks, evidence),
    );
    const { validation, text } = applyUnrunnableAnswers(spec.validation, found.checks, answers);
    // The fleet's plan is this phase's own copy: the next integration runs the changed checks.
    spec.validation = validation;
    const by = [...new Set(answers.map((a) => a.user))].join(', ');
    const title = `Deviation: milestone ${spec.id} validation changed: ${text} (answered by ${by})`;
    state.log(title);
    await quickActivities(ctx.hostQueue)
      .prependDecision({
        sagaDir: ctx.sagaDir,
        entry: {
          at: answers[answers.length - 1]!.answeredAt,
          title,
          lines: [`- ${answers.map((a) => `${a.interactionId}: ${a.choice}`).join(', ')}`],
        },
      })
      .catch(() => undefined); // the log line records it as well
  }
}
