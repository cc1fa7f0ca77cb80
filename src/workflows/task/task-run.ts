/**
 * The state of one task delegation while its workflow runs: the spec it works from, its attempts and their
 * outcome, the agent's session, what it has spent and the saga budget it runs under. Workflow state
 * (deterministic, no I/O); the report it ends with goes to the fleet.
 */
import { patched } from '@temporalio/workflow';
import type { PreparedTask, TaskHandoff } from '../../activities/task-attempt';
import { addUsage, noUsage } from '../../domain/agents/usage';
import { sagaSpentReason, taskRunCapUsd, type BudgetGrant } from '../../domain/fleet/budget';
import type { TaskReport } from '../../domain/fleet/fleet';
import { currentTaskSpec } from '../../domain/fleet/spec-changes';
import { reviewEnd, type AttemptCheck, type AttemptOutcome } from '../../domain/fleet/task-outcome';
import {
  unrunnableChecks,
  unrunnableReason,
  type UnrunnableCheck,
} from '../../domain/fleet/unrunnable-checks';
import type { SpecChange, Usage } from '../../domain/contract/state';
import { PATCHES } from '../patches';
import type { TaskInput } from './task-input';

export class TaskRun {
  spec;
  /** The worktree, once the first attempt (or the spec adjustment) has made it. */
  prepared: PreparedTask | null = null;
  handoff: TaskHandoff | undefined;
  usage: Usage = noUsage();
  /** Files and notes the next attempt's agent gets. Conflict notes of the first attempt's merges are added by runTaskAttempt. */
  failures: string[];
  notes: string[];
  evidence: string[] = [];
  status: TaskReport['status'] = 'blocked';
  reason: string | null = null;
  attempts = 0;
  /** Set by a run whose failure no retry can fix: no further attempt is made. */
  fatal = false;
  /** The agent's reason when it reported blocked and the checks did not pass. */
  agentBlocked: string | null = null;
  /** The answers the agent offered with that report. */
  gapOptions: TaskReport['gapOptions'] | null = null;
  /** The latest attempt's agent finished and its checks failed (what an adjusted spec may resolve). */
  checksFailed = false;
  /** The latest attempt's agent timed out, hung or crashed before its checks ran. */
  agentFailed = false;
  /** The latest attempt's checks that could not run (126/127), and whether the task stopped on them. */
  unrunnable: UnrunnableCheck[] = [];
  stoppedOnUnrunnable = false;
  /** The user's [A] Abort or [E] Escalate at the review's cap-reached or stuck checkpoint. */
  reviewStop: TaskReport['reviewStop'] | null = null;
  sessionId: string | null = null;
  /** Where that session lives: a fix attempt resumes it only on the same machine. */
  sessionHost: string | null = null;
  resumedRuns = 0;
  sessionNote: string | null = null;
  /** The saga budget as the fleet last granted it (null: the task runs without one); its rules: domain/fleet/budget.ts. */
  grant: BudgetGrant | null;
  budgetStopped = false;
  /** The planner's adjustment of the spec made for this delegation, reported to the fleet. */
  specChange: SpecChange | null = null;

  constructor(
    private readonly input: TaskInput,
    private readonly taskUsd: number | null,
  ) {
    this.spec = currentTaskSpec(input.spec, input.specChanges);
    this.failures = [...input.retained.evidence];
    this.notes = [...input.retained.notes];
    this.grant = input.budget ?? null;
  }

  /** The cap of the next agent run: the least of what the task and the saga budgets leave. */
  runCap(): number | null {
    return taskRunCapUsd(this.taskUsd, this.grant, this.usage.costUsd);
  }

  /** Why no further run may start at the saga budget; null while there is some left. */
  sagaBudgetSpent(): string | null {
    return sagaSpentReason(this.grant, this.usage.costUsd);
  }

  /** Starts the next attempt; returns its number (continuing from earlier delegations). */
  startAttempt(): number {
    this.attempts++;
    // The latest attempt decides (a review's revisions run after a stop): earlier outcomes are cleared.
    this.agentBlocked = null;
    this.gapOptions = null;
    this.checksFailed = false;
    this.agentFailed = false;
    this.unrunnable = [];
    this.fatal = false;
    return (this.input.attemptOffset ?? 0) + this.attempts;
  }

  /** Ends the task without a (further) run: no retry helps. */
  stop(reason: string): void {
    this.fatal = true;
    this.reason = reason;
  }

  /**
   * The handoff refused the worktree (a nested repository): nothing was committed, and no retry of the
   * same work would change that, so the task ends blocked and the user is asked. Returns false (not passed).
   */
  handoffRefused(reason: string): false {
    this.status = 'blocked';
    this.stop(`handoff refused: ${reason}`);
    return false;
  }

  addUsage(usage: Usage | null | undefined): void {
    this.usage = addUsage(this.usage, usage);
  }

  /** The agent's session after run `n`; returns the note when a resume it asked for started fresh. */
  noteSession(
    n: number,
    run: {
      sessionId?: string | null;
      host?: string;
      resumedSession?: string | null;
      resumeFallback?: string | null;
    },
  ): string | null {
    this.sessionId = run.sessionId ?? this.sessionId;
    this.sessionHost = run.host ?? this.sessionHost;
    if (run.resumedSession) this.resumedRuns++;
    if (!run.resumeFallback) return null;
    this.sessionNote = `attempt ${n} started a fresh session: ${run.resumeFallback}`;
    return this.sessionNote;
  }

  /** Takes the attempt's outcome; returns whether it passed. */
  record(outcome: AttemptOutcome, checks?: { results: AttemptCheck[] } | null): boolean {
    this.evidence = outcome.evidence;
    if (outcome.passed) return true;
    this.unrunnable = outcome.checksFailed ? unrunnableChecks(checks?.results ?? []) : [];
    this.failures = outcome.failures;
    this.notes = outcome.notes;
    this.reason = outcome.reason;
    this.fatal = outcome.fatal;
    this.agentBlocked = outcome.agentBlocked;
    this.gapOptions = outcome.gapOptions ?? null;
    this.checksFailed = outcome.checksFailed;
    this.agentFailed = outcome.agentFailed === true;
    return false;
  }

  /**
   * A check that cannot run fails every attempt alike: the task stops after the attempt that found it, and
   * the fleet asks the user about the check at once (no more paid attempts, no planner run).
   */
  stopsOnUnrunnable(): boolean {
    if (!this.unrunnable.length || !patched(PATCHES.unrunnableChecks)) return false;
    this.stoppedOnUnrunnable = true;
    this.stop(unrunnableReason(this.unrunnable));
    return true;
  }

  /** The spec the planner adjusted for this delegation: later attempts work from it. */
  adjusted(change: SpecChange): void {
    this.specChange = change;
    this.spec = currentTaskSpec(this.input.spec, [...(this.input.specChanges ?? []), change]);
    this.notes = [
      ...this.notes,
      `Your task's spec was adjusted after the blocked delegations: ${change.text}`,
    ];
  }

  /** The quality-locked review's outcome, when it did not simply pass. */
  reviewed(outcome: string): void {
    const end = reviewEnd(outcome, this.grant, this.usage.costUsd);
    if (!end) return;
    this.status = 'blocked';
    this.reason = end.reason;
    if (end.kind === 'budget') this.budgetStopped = true;
    else {
      this.fatal = true;
      this.reviewStop = end.reviewStop;
    }
  }

  /** What the task reports to the fleet when its delegation ends. */
  report(ids: { workflowId: string; runId: string }, profile: string): TaskReport {
    const { status } = this;
    return {
      ref: this.input.ref,
      status,
      reason: status === 'passed' ? null : (this.reason ?? 'validation did not pass'),
      branch: this.input.branch,
      commit: this.handoff!.commit,
      changedFiles: this.handoff!.changedFiles,
      evidence: this.evidence,
      attempts: this.attempts,
      usage: this.usage,
      workflowId: ids.workflowId,
      runId: ids.runId,
      retryable: !this.fatal,
      agent: {
        profile,
        sessionId: this.sessionId,
        ...(this.resumedRuns ? { resumedRuns: this.resumedRuns } : {}),
        ...(this.sessionNote ? { sessionNote: this.sessionNote } : {}),
      },
      ...(this.agentBlocked !== null ? { agentBlocked: this.agentBlocked } : {}),
      ...(this.gapOptions ? { gapOptions: this.gapOptions } : {}),
      ...(this.budgetStopped ? { budgetStopped: this.budgetStopped } : {}),
      ...(this.reviewStop ? { reviewStop: this.reviewStop } : {}),
      ...(this.specChange ? { specChange: this.specChange } : {}),
      ...(status !== 'passed' && this.checksFailed ? { checksFailed: this.checksFailed } : {}),
      ...(status !== 'passed' && this.agentFailed && !this.fatal ? { agentFailed: true } : {}),
      ...(status !== 'passed' && this.stoppedOnUnrunnable ? { unrunnableChecks: this.unrunnable } : {}),
    };
  }
}
