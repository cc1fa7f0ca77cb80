/**
 * The steps of one task delegation (task.ts runs them in order): move the branch when the task is redone
 * on the integrated state, adjust the spec, attempt until the checks pass, review, hand off. Its state
 * lives in a TaskRun; what an attempt's outcome means is decided in domain/fleet/task-outcome.ts.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskAttemptResult } from '../../activities/task-attempt';
import { budgetStopReason, taskBudgetReason, type BudgetGrant } from '../../domain/fleet/budget';
import { classifyAttempt } from '../../domain/fleet/task-outcome';
import { activitiesFor } from '../activity-proxies';
import { taskUsageSignal } from '../../domain/saga/messages';
import { reviewLoop } from '../review-loop';
import { taskProfile } from '../shared';
import { SpecAdjustment } from './spec-adjustment';
import type { TaskInput } from './task-input';
import { TaskRun } from './task-run';

export class TaskDelegation {
  readonly run: TaskRun;
  readonly profile;
  /** Why the task runs another profile than its plan names (an unconfined one), or null. */
  readonly deviation: string | null;
  private readonly activities;
  private readonly label: string;
  /** Each task its own port range: checks that start servers do not collide. */
  private readonly env: Record<string, string>;
  /** The running attempt, while the fleet may stop it at the saga budget. */
  private attemptScope: CancellationScope | null = null;

  constructor(private readonly input: TaskInput) {
    const { ctx } = input;
    this.run = new TaskRun(input, ctx.settings.budget.taskUsd);
    this.activities = activitiesFor(ctx);
    const chosen = taskProfile(ctx, input.ref, this.run.spec.agent ?? null);
    this.profile = chosen.profile;
    this.deviation = chosen.deviation;
    this.label = `${input.key}-d${input.delegation}`;
    this.env = { SAGA_PORT_BASE: String(input.portBase) };
  }

  private commitMessage(outcome: 'pass' | 'blocked'): string {
    return `saga(${this.input.ctx.name}): task ${this.input.ref} ${this.run.spec.slug} — ${outcome}`;
  }

  private prepareInput() {
    const { ctx, ...input } = this.input;
    return {
      repo: ctx.repo,
      branch: input.branch,
      worktree: input.worktree,
      base: input.base,
      copyFiles: ctx.settings.worktree.copy,
      setup: ctx.settings.worktree.setup,
      env: this.env,
      passEnv: ctx.settings.passEnv,
      sandbox: ctx.settings.sandbox,
      mergeBranches: input.mergeBranches,
      mergeMessage: `saga(${ctx.name}): bring into ${input.ref} its dependency`,
    };
  }

  /** Commits land on the task branch only, never carry a `worktree.copy` file, and stay within the limits. */
  private handoffRules() {
    const { ctx, branch } = this.input;
    return { branch, excludePaths: ctx.settings.worktree.copy, settings: ctx.settings.handoff };
  }

  /** Redo on top of another state: the branch is moved there first (its old tip archived). */
  async resetBranch(reset: NonNullable<TaskInput['resetBranch']>): Promise<void> {
    setCurrentDetails(`Moving ${this.input.branch} to ${reset.commit.slice(0, 10)}`);
    await this.activities.quick.resetTaskBranch({
      repo: this.input.ctx.repo,
      branch: this.input.branch,
      to: reset.commit,
      archiveRef: reset.archiveRef,
    });
  }

  /** The fleet's budget updated; at `budget.on_exhausted: stop` the running agent is stopped (handed off after). */
  budgetGranted(next: BudgetGrant): void {
    this.run.grant = next;
    if (next.stopNow && this.attemptScope) {
      this.run.budgetStopped = true;
      this.attemptScope.cancel();
    }
  }

  /** Runs an attempt that the fleet may stop; null when it did. */
  private async stoppable<T>(run: () => Promise<T>): Promise<T | null> {
    if (!this.run.grant) return run();
    this.attemptScope = new CancellationScope();
    try {
      return await this.attemptScope.run(run);
    } catch (error) {
      if (this.run.budgetStopped && isCancellation(error)) return null;
      throw error;
    } finally {
      this.attemptScope = null;
    }
  }

  /** Tells the fleet what this task has spent, so it can hold the saga budget while the task runs. */
  private async reportSpend(): Promise<void> {
    const parent = workflowInfo().parent;
    if (!this.run.grant || !parent) return;
    await getExternalWorkflowHandle(parent.workflowId)
      .signal(taskUsageSignal, { ref: this.input.ref, usage: this.run.usage })
      .catch(() => undefined); // a fleet that is gone has no budget to hold
  }

  /** Adjusts the spec in the delegation's fresh worktree; false when there was nothing to adjust. */
  async adjustSpec(adjust: NonNullable<TaskInput['adjustSpec']>): Promise<boolean> {
    const { input, run } = this;
    setCurrentDetails('Adjusting the task spec');
    run.prepared = await this.activities.quick.prepareTaskWorktree(this.prepareInput());
    const problem = await new SpecAdjustment(input, run, adjust).apply(`${this.label}-adjust`);
    await this.reportSpend();
    if (problem !== null) {
      // Another run of the same spec would end the same way: the fleet asks the user (no agent run here).
      run.reason = `blocked in ${input.delegation - 1} delegations and ${problem}: ${adjust.blocker}`;
      return false;
    }
    return true;
  }

  /** The agent in a fix→validate loop, up to `attempts` times, until the checks pass or no retry can help. */
  async attemptUntilDone(): Promise<void> {
    const { ctx } = this.input;
    const { run } = this;
    for (let i = 0; i < ctx.settings.attempts; i++) {
      const spent = taskBudgetReason(run.usage.costUsd, ctx.settings.budget.taskUsd);
      if (spent !== null) {
        run.reason = spent;
        break;
      }
      if (await this.attempt([], i === ctx.settings.attempts - 1)) {
        run.status = 'passed';
        run.reason = null;
        break;
      }
      if (run.fatal || run.stopsOnUnrunnable()) break;
    }
  }

  /** One implementer run followed by the task's checks; returns whether the checks passed. */
  private async attempt(extraNotes: string[], last: boolean): Promise<boolean> {
    const { run } = this;
    // The saga budget gates every run: none starts once it is spent (the fleet redoes the task after a raise).
    const spent = run.sagaBudgetSpent();
    if (spent !== null) {
      run.budgetStopped = true;
      run.stop(spent);
      return false;
    }
    const n = run.startAttempt();
    setCurrentDetails(`Attempt ${n}: agent running`);
    // A quality-locked task keeps its worktree for the reviewer; otherwise a pass, or the last failure,
    // ends the task inside the same activity.
    const review = this.input.ctx.flags.quality_locked;
    const ran = await this.stoppable(() =>
      this.runAttempt(n, extraNotes, {
        onPass: review ? null : this.commitMessage('pass'),
        onFail: review || !last ? null : this.commitMessage('blocked'),
      }),
    );
    if (!ran) {
      run.stop(budgetStopReason(run.grant?.limitUsd));
      return false;
    }
    if (ran.handoff) run.handoff = ran.handoff;
    run.addUsage(ran.run.usage);
    await this.reportSpend();
    const sessionNote = run.noteSession(n, ran.run);
    // Not a fault (a profile without resume always starts fresh): the task's status shows the note.
    if (sessionNote) log.info(`Task ${this.input.ref}: ${sessionNote}`);
    const passed = run.record(classifyAttempt(n, ran.run, ran.checks), ran.checks);
    return ran.handoff?.refused ? run.handoffRefused(ran.handoff.refused) : passed;
  }

  /** The agent, then the checks, in one activity; `handoff` names the commit message for outcomes that end the task. */
  private async runAttempt(
    n: number,
    extraNotes: string[],
    handoff: { onPass: string | null; onFail: string | null },
  ): Promise<TaskAttemptResult> {
    const { ctx, ...input } = this.input;
    const { run, label, env } = this;
    const cap = run.runCap();
    const agent = {
      template: 'implementer',
      sagaName: ctx.name,
      sagaDir: ctx.sagaDir,
      role: 'implementer' as const,
      stage: 'task',
      taskId: input.ref,
      attempt: n,
      profile: this.profile,
      workdir: input.worktree,
      attachments: run.failures,
      context: {
        task: run.spec,
        ref: input.ref,
        milestone: input.milestone,
        attempt: n,
        notes: [...run.notes, ...extraNotes],
      },
      extraEnv: env,
      runLabel: `${label}-a${n}`,
      // A fix attempt continues the agent's conversation (the CLI's session) with the failure notes and
      // check output, instead of a cold start that re-reads the repo and re-learns the task.
      ...(run.attempts > 1
        ? { resume: { sessionId: run.sessionId, host: run.sessionHost, reason: 'retry' as const } }
        : {}),
      ...(cap !== null ? { maxBudgetUsd: cap } : {}),
    };
    const checks = {
      sagaDir: ctx.sagaDir,
      checks: run.spec.validation,
      label: `${label}-a${n}-checks`,
      timeoutMs: ctx.settings.checkTimeoutMs,
      env, // checks that start servers need the task's own port range too
      passEnv: ctx.settings.passEnv,
      sandbox: ctx.settings.sandbox,
    };
    const result = await this.activities.long.runTaskAttempt({
      prepare: run.prepared ? undefined : this.prepareInput(),
      agent,
      checks,
      handoff: { repo: ctx.repo, baseCommit: run.prepared?.startCommit, ...this.handoffRules(), ...handoff },
    });
    run.prepared ??= result.prepared;
    return result;
  }

  /** The quality-locked review of a passing task; its revisions are attempts like the others. */
  async review(): Promise<void> {
    const { ctx, ref, worktree } = this.input;
    const { run } = this;
    const outcome = await reviewLoop(ctx, {
      phase: 'implementation',
      checkpoint: `task-${this.label}`,
      subject: 'task',
      taskId: ref,
      workdir: worktree,
      context: { task: run.spec, ref },
      askCheckpoint: false,
      budgetLeft: () => run.runCap(),
      revise: async (findings) => this.attempt([`Reviewer findings to fix:\n${findings}`], false),
      // The task's status follows its latest attempt: a failed revision that a later one fixes passes.
      onRevised: async (ok) => {
        run.status = ok ? 'passed' : 'blocked';
      },
    });
    run.reviewed(outcome);
  }

  /** Commits what is there and removes the worktree, unless an attempt already did; never cancelled. */
  async handOff(): Promise<void> {
    const { run } = this;
    if (run.handoff) return;
    await CancellationScope.nonCancellable(async () => {
      run.handoff = await this.activities.quick.handoffTask({
        repo: this.input.ctx.repo,
        worktree: this.input.worktree,
        message: this.commitMessage(run.status === 'passed' ? 'pass' : 'blocked'),
        baseCommit: run.prepared?.startCommit,
        // The activity checks the worktree is this task's first: a cancellation may have come while it
        // was being made, or after an attempt had already handed it off.
        ...this.handoffRules(),
      });
      if (run.handoff.refused) run.handoffRefused(run.handoff.refused);
    });
  }
}
