/**
 * One worker task (Saga procedure Phase 2, steps 2-4): its own worktree and branch, the agent in a
 * fix→validate loop, a durable handoff (a commit on the task branch), and only then the worktree's removal.
 * The history stays small: prompts, transcripts and check output live in files; history holds paths.
 * Each attempt is one activity (worktree set-up on the first, handoff on the last), so a task costs few
 * workflow-task round trips.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { remainingUsd, runCapUsd, sagaBudgetReason, type BudgetGrant } from '../domain/fleet/budget';
import type { Plan, PlanTask } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import type { SpecChange, Usage } from '../domain/saga/state';
import { currentTaskSpec } from '../domain/fleet/spec-changes';
import type { TaskReport } from '../domain/fleet/fleet';
import type { PreparedTask, TaskAttemptResult, TaskHandoff } from '../activities/task-attempt';
import { agentBlockedReason, agentBlockedTaskReason } from '../domain/fleet/blocked-report';
import { activitiesFor } from './activity-proxies';
import { reviewLoop } from './review-loop';
import { adjustTaskSpec } from './spec-adjustment';
import { budgetGrantSignal, taskUsageSignal } from './definitions';
import { profileFor } from './shared';
import { addUsage, noUsage } from '../domain/agents/usage';

export interface TaskInput {
  ctx: SagaContext;
  milestone: number;
  spec: PlanTask;
  /** Changes to the spec agreed since planning: every attempt's agent and reviewer get them. */
  specChanges?: SpecChange[];
  ref: string;
  key: string;
  branch: string;
  worktree: string;
  /** Branch or commit the task branch starts from (only used when the branch does not exist yet). */
  base: string;
  /** Branches of finished same-milestone dependencies, merged in so the agent builds on their work. */
  mergeBranches: string[];
  delegation: number;
  /**
   * Redo the task on top of another state: its branch is moved to `commit` first (the old tip is kept under
   * `archiveRef`), since an existing branch would otherwise be reused as it is and `base` ignored.
   */
  resetBranch?: { commit: string; archiveRef: string };
  /** Attempts made by earlier delegations: attempt numbers continue from here (SAGA_ATTEMPT, run labels). */
  attemptOffset?: number;
  /**
   * Set when the delegations before stayed blocked on something the spec may resolve: the planner adjusts
   * the task's spec (spec-adjustment.ts) before the first attempt. `plan`: the task alone as a valid plan.
   */
  adjustSpec?: { blocker: string; plan: Plan; evidence: string[] };
  /** Context kept from earlier delegations: failure output files and notes. */
  retained: { evidence: string[]; notes: string[] };
  portBase: number;
  /**
   * The saga budget when the task started (tasks started before budgets held have none): every agent run
   * is gated by it, the task reports its spend to the fleet after each run, and the fleet's signal updates it.
   */
  budget?: BudgetGrant;
}

export type { TaskReport };

export async function taskWorkflow(input: TaskInput): Promise<TaskReport> {
  const { ctx, key } = input;
  let spec = currentTaskSpec(input.spec, input.specChanges);
  const { quick, long } = activitiesFor(ctx);
  const profile = profileFor(ctx, spec.agent ?? null);
  const label = `${key}-d${input.delegation}`;
  const env = { SAGA_PORT_BASE: String(input.portBase) };
  const commitMessage = (outcome: 'pass' | 'blocked') =>
    `saga(${ctx.name}): task ${input.ref} ${spec.slug} — ${outcome}`;

  if (input.resetBranch) {
    setCurrentDetails(`Moving ${input.branch} to ${input.resetBranch.commit.slice(0, 10)}`);
    await quick.resetTaskBranch({
      repo: ctx.repo,
      branch: input.branch,
      to: input.resetBranch.commit,
      archiveRef: input.resetBranch.archiveRef,
    });
  }
  const prepareInput = {
    repo: ctx.repo,
    branch: input.branch,
    worktree: input.worktree,
    base: input.base,
    copyFiles: ctx.settings.worktree.copy,
    setup: ctx.settings.worktree.setup,
    env,
    passEnv: ctx.settings.passEnv,
    sandbox: ctx.settings.sandbox,
    mergeBranches: input.mergeBranches,
    mergeMessage: `saga(${ctx.name}): bring into ${input.ref} its dependency`,
  };
  // Commits land on the task branch only, never carry a `worktree.copy` file, and stay within the limits.
  const handoffRules = {
    branch: input.branch,
    excludePaths: ctx.settings.worktree.copy,
    settings: ctx.settings.handoff,
  };
  /** The worktree, once the first attempt has made it. */
  let prepared: PreparedTask | null = null;

  let usage: Usage = noUsage();
  let failures = [...input.retained.evidence];
  // Conflict notes of the first attempt's merges are added by runTaskAttempt.
  let notes = [...input.retained.notes];
  let evidence: string[] = [];
  let status: TaskReport['status'] = 'blocked';
  let reason: string | null = null;
  let attempts = 0;
  /** Set by a run whose failure no retry can fix: no further attempt is made. */
  let fatal = false;
  /** The agent's reason when it reported blocked and the checks did not pass. */
  let agentBlocked: string | null = null;
  /** The latest attempt's agent finished and its checks failed (what an adjusted spec may resolve). */
  let checksFailed = false;
  /** The user's [A] Abort or [E] Escalate at the review's cap-reached or stuck checkpoint. */
  let reviewStop: TaskReport['reviewStop'] | null = null;
  let sessionId: string | null = null;
  /** Where that session lives: a fix attempt resumes it only on the same machine (issue 16). */
  let sessionHost: string | null = null;
  let resumedRuns = 0;
  let sessionNote: string | null = null;
  const offset = input.attemptOffset ?? 0;
  let handoffResult: TaskHandoff | undefined;
  let grant = input.budget ?? null;
  let budgetStopped = false;
  let attemptScope: CancellationScope | null = null;
  const sagaLeft = () =>
    grant ? remainingUsd(grant.limitUsd, grant.spentElsewhereUsd + usage.costUsd) : null;
  const runCap = () => runCapUsd(remainingUsd(ctx.settings.budget.taskUsd, usage.costUsd), sagaLeft());
  if (grant)
    setHandler(budgetGrantSignal, (next) => {
      grant = next;
      // budget.on_exhausted: stop — the running agent is stopped; the handoff below commits its work.
      if (next.stopNow && attemptScope) {
        budgetStopped = true;
        attemptScope.cancel();
      }
    });
  /** Runs an attempt that the fleet may stop; null when it did. */
  async function stoppable<T>(run: () => Promise<T>): Promise<T | null> {
    if (!grant) return run();
    attemptScope = new CancellationScope();
    try {
      return await attemptScope.run(run);
    } catch (error) {
      if (budgetStopped && isCancellation(error)) return null;
      throw error;
    } finally {
      attemptScope = null;
    }
  }
  /** Tells the fleet what this task has spent, so it can hold the saga budget while the task runs. */
  async function reportSpend(): Promise<void> {
    const parent = workflowInfo().parent;
    if (!grant || !parent) return;
    await getExternalWorkflowHandle(parent.workflowId)
      .signal(taskUsageSignal, { ref: input.ref, usage })
      .catch(() => undefined); // a fleet that is gone has no budget to hold
  }

  /** The agent, then the checks; `handoff` names the commit message for outcomes that end the task. */
  async function runAttempt(
    n: number,
    extraNotes: string[],
    handoff: { onPass: string | null; onFail: string | null },
  ): Promise<TaskAttemptResult> {
    const agent = {
      template: 'implementer',
      sagaName: ctx.name,
      sagaDir: ctx.sagaDir,
      role: 'implementer' as const,
      stage: 'task',
      taskId: input.ref,
      attempt: n,
      profile,
      workdir: input.worktree,
      attachments: failures,
      context: {
        task: spec,
        ref: input.ref,
        milestone: input.milestone,
        attempt: n,
        notes: [...notes, ...extraNotes],
      },
      extraEnv: env,
      runLabel: `${label}-a${n}`,
      // A fix attempt continues the agent's conversation (the CLI's session) with the failure notes and
      // check output, instead of a cold start that re-reads the repo and re-learns the task.
      ...(attempts > 1 ? { resume: { sessionId, host: sessionHost, reason: 'retry' as const } } : {}),
      ...(runCap() !== null ? { maxBudgetUsd: runCap() } : {}),
    };
    const checks = {
      sagaDir: ctx.sagaDir,
      checks: spec.validation,
      label: `${label}-a${n}-checks`,
      timeoutMs: ctx.settings.checkTimeoutMs,
      env, // checks that start servers need the task's own port range too
      passEnv: ctx.settings.passEnv,
      sandbox: ctx.settings.sandbox,
    };
    const result = await long.runTaskAttempt({
      prepare: prepared ? undefined : prepareInput,
      agent,
      checks,
      handoff: { repo: ctx.repo, baseCommit: prepared?.startCommit, ...handoffRules, ...handoff },
    });
    prepared ??= result.prepared;
    return result;
  }

  /** One implementer run followed by the task's checks; returns whether the checks passed. */
  async function attempt(extraNotes: string[], last: boolean): Promise<boolean> {
    // The saga budget gates every run: none starts once it is spent (the fleet redoes the task after a raise).
    const left = sagaLeft();
    if (left !== null && left <= 0 && grant?.limitUsd != null) {
      budgetStopped = true;
      fatal = true;
      reason = sagaBudgetReason(grant.spentElsewhereUsd + usage.costUsd, grant.limitUsd);
      return false;
    }
    attempts++;
    const n = offset + attempts;
    // The latest attempt decides (a review's revisions run after a stop): earlier outcomes are cleared.
    agentBlocked = null;
    checksFailed = false;
    fatal = false;
    setCurrentDetails(`Attempt ${n}: agent running`);
    // A quality-locked task keeps its worktree for the reviewer; otherwise a pass, or the last failure,
    // ends the task inside the same activity.
    const review = ctx.flags.quality_locked;
    const ran = await stoppable(() =>
      runAttempt(n, extraNotes, {
        onPass: review ? null : commitMessage('pass'),
        onFail: review || !last ? null : commitMessage('blocked'),
      }),
    );
    if (!ran) {
      fatal = true;
      reason = `budget: stopped at the saga budget of $${grant?.limitUsd ?? '?'} (budget.on_exhausted: stop)`;
      return false;
    }
    const { run, checks, handoff } = ran;
    if (handoff) handoffResult = handoff;
    usage = addUsage(usage, run.usage);
    await reportSpend();
    sessionId = run.sessionId ?? sessionId;
    sessionHost = run.host ?? sessionHost;
    if (run.resumedSession) resumedRuns++;
    if (run.resumeFallback) {
      sessionNote = `attempt ${n} started a fresh session: ${run.resumeFallback}`;
      log.warn(`Task ${input.ref}: ${sessionNote}`);
    }
    if (run.failure && !run.failure.retryable && !checks?.passed) {
      // Paying for the same failure again would not change it: stop with the CLI's own reason.
      fatal = true;
      failures = [run.transcriptPath];
      notes = [`Attempt ${n}: ${run.failure.message}`];
      reason = run.failure.message;
      evidence = checks ? checks.results.map((r) => r.outputPath) : [run.transcriptPath];
      return false;
    }
    // The checks decide: a blocked report whose work passes them is a pass.
    const blockedReason = checks?.passed ? null : agentBlockedReason(run.report);
    if (blockedReason !== null) {
      // The agent says it cannot finish (a spec gap, an external decision): another paid run of the
      // same spec would not change that, so the task stops here and the user is asked.
      fatal = true;
      agentBlocked = blockedReason;
      const failed = checks?.results.filter((r) => r.exitCode !== 0 || r.timedOut) ?? [];
      failures = [...failed.map((r) => r.outputPath), run.transcriptPath];
      notes = [`Attempt ${n}: you reported blocked: ${blockedReason}`];
      reason = agentBlockedTaskReason(blockedReason);
      evidence = checks ? checks.results.map((r) => r.outputPath) : [run.transcriptPath];
      return false;
    }
    if (!checks) {
      const why = run.timedOut
        ? 'timed out'
        : run.idle
          ? 'printed nothing for too long (hung)'
          : `exited with ${run.exitCode ?? run.signal}`;
      failures = [run.transcriptPath];
      notes = [`Attempt ${n}: ${run.failure?.message ?? `the agent ${why}`}.`];
      reason = run.failure?.message ?? `agent ${why}`;
      evidence = [run.transcriptPath];
      return false;
    }
    evidence = checks.results.map((r) => r.outputPath);
    if (checks.passed) return true;
    const failed = checks.results.filter((r) => r.exitCode !== 0 || r.timedOut);
    failures = failed.map((r) => r.outputPath);
    notes = failed.map(
      (r) => `Check failed: ${r.text} (\`${r.check}\`) ${r.timedOut ? 'timed out' : `exit ${r.exitCode}`}`,
    );
    reason = notes.join('; ');
    checksFailed = true;
    return false;
  }

  /** The planner's adjustment of the spec made for this delegation, reported to the fleet. */
  let specChange: SpecChange | null = null;
  /** Adjusts the spec in the delegation's fresh worktree; false when there was nothing to adjust. */
  async function adjustSpec(adjust: NonNullable<TaskInput['adjustSpec']>): Promise<boolean> {
    setCurrentDetails('Adjusting the task spec');
    prepared = await quick.prepareTaskWorktree(prepareInput);
    const adjusted = await adjustTaskSpec(ctx, {
      ...input,
      spec,
      adjust,
      runLabel: `${label}-adjust`,
      maxBudgetUsd: runCap(),
    });
    usage = addUsage(usage, adjusted.usage);
    await reportSpend();
    if ('problem' in adjusted) {
      // Another run of the same spec would end the same way: the fleet asks the user (no agent run here).
      reason = `blocked in ${input.delegation - 1} delegations and ${adjusted.problem}: ${adjust.blocker}`;
      return false;
    }
    specChange = adjusted.change;
    spec = currentTaskSpec(input.spec, [...(input.specChanges ?? []), specChange]);
    notes = [...notes, `Your task's spec was adjusted after the blocked delegations: ${specChange.text}`];
    return true;
  }

  try {
    const adjusted = input.adjustSpec ? await adjustSpec(input.adjustSpec) : true;
    for (let i = 0; adjusted && i < ctx.settings.attempts; i++) {
      if (ctx.settings.budget.taskUsd !== null && usage.costUsd >= ctx.settings.budget.taskUsd) {
        reason = `budget: task spent $${usage.costUsd.toFixed(2)} of $${ctx.settings.budget.taskUsd}`;
        break;
      }
      if (await attempt([], i === ctx.settings.attempts - 1)) {
        status = 'passed';
        reason = null;
        break;
      }
      if (fatal) break;
    }
    if (status === 'passed' && ctx.flags.quality_locked) {
      const outcome = await reviewLoop(ctx, {
        phase: 'implementation',
        checkpoint: `task-${label}`,
        subject: 'task',
        taskId: input.ref,
        workdir: input.worktree,
        context: { task: spec, ref: input.ref },
        askCheckpoint: false,
        budgetLeft: runCap,
        revise: async (findings) => attempt([`Reviewer findings to fix:\n${findings}`], false),
        // The task's status follows its latest attempt: a failed revision that a later one fixes passes.
        onRevised: async (ok) => {
          status = ok ? 'passed' : 'blocked';
        },
      });
      if (outcome === 'budget') {
        // Redone after a raise: its passing work is on the branch, only the review is missing.
        status = 'blocked';
        budgetStopped = true;
        reason =
          grant?.limitUsd != null
            ? sagaBudgetReason(grant.spentElsewhereUsd + usage.costUsd, grant.limitUsd)
            : 'budget: the task budget is spent';
      } else if (outcome === 'abort' || outcome === 'escalated') {
        // The user's judgement at an exception checkpoint: no other run of this task starts without them.
        status = 'blocked';
        fatal = true;
        reviewStop = outcome;
        reason = `quality-locked review: ${outcome === 'abort' ? 'aborted' : 'escalated'} at its checkpoint`;
      }
    }
  } finally {
    // Durable handoff even when cancelled or failed: commit what is there, then remove the worktree.
    if (!handoffResult)
      await CancellationScope.nonCancellable(async () => {
        handoffResult = await quick.handoffTask({
          repo: ctx.repo,
          worktree: input.worktree,
          message: commitMessage(status === 'passed' ? 'pass' : 'blocked'),
          baseCommit: prepared?.startCommit,
          // The activity checks the worktree is this task's first: a cancellation may have come while it
          // was being made, or after an attempt had already handed it off.
          ...handoffRules,
        });
      });
  }
  const info = workflowInfo();
  return {
    ref: input.ref,
    status,
    reason: status === 'passed' ? null : (reason ?? 'validation did not pass'),
    branch: input.branch,
    commit: handoffResult!.commit,
    changedFiles: handoffResult!.changedFiles,
    evidence,
    attempts,
    usage,
    workflowId: info.workflowId,
    runId: info.runId,
    retryable: !fatal,
    agent: {
      profile: profile.name,
      sessionId,
      ...(resumedRuns ? { resumedRuns } : {}),
      ...(sessionNote ? { sessionNote } : {}),
    },
    ...(agentBlocked !== null ? { agentBlocked } : {}),
    ...(budgetStopped ? { budgetStopped } : {}),
    ...(reviewStop ? { reviewStop } : {}),
    ...(specChange ? { specChange } : {}),
    ...(status !== 'passed' && checksFailed ? { checksFailed } : {}),
  };
}
