/**
 * Quality-locked review (README: Real use): a fresh reviewer reviews; the flag module decides
 * PASS / REVISE / CAP_REACHED / ESCALATE; exception checkpoints always wait for the user.
 */
import {
  checkpointChoice,
  checkpointInteractionId,
  checkpointOptions,
  CHECKPOINT_REVISE,
} from '../domain/planning/plan-review';
import { ITERATION_CAP, qualityDecision, type IterationRecord } from '../domain/fleet/review';
import { autoPickLogLine } from '../domain/planning/auto-pick-notice';
import type { SagaContext } from '../domain/saga/saga-input';
import type { Answer } from '../domain/contract/state';
import { activitiesFor } from './activity-proxies';
import { ask } from './ask';
import { profileFor, sagaLog } from './shared';

/** `budget`: the saga budget was spent before a reviewer run could start. */
export type ReviewOutcome = 'pass' | 'skipped' | 'forced' | 'escalated' | 'abort' | 'budget';

export interface ReviewLoopOptions<T> {
  phase: string;
  /** Names this review in the manifest (a task's names its delegation: iterations restart at 1 in each). */
  checkpoint: string;
  subject: 'plan' | 'task';
  taskId: string;
  workdir: string;
  /** What the reviewer is given; a function is called per iteration, so it can show the latest revision. */
  context: Record<string, unknown> | (() => Record<string, unknown>);
  /** Hands the findings back to the author; returns the revised artifact. */
  revise: (findings: string, iteration: number) => Promise<T>;
  onRevised: (next: T) => Promise<void>;
  /** Artifact checkpoints offer [A] Review / [S] Skip (+ [R], [N]); task results are reviewed without asking. */
  askCheckpoint?: boolean;
  /** [R] Revise at the checkpoint: the author revises with the user's note; the checkpoint is asked again. */
  reviseWithNote?: (note: string, ask: number) => Promise<T>;
  /** [N] New session: a fresh author session drafts the artifact again; the checkpoint is asked again. */
  newSession?: (ask: number) => Promise<T>;
  /** What the budgets leave for the next reviewer run (null: no budget); at 0 no reviewer run starts. */
  budgetLeft?: () => number | null;
}

/**
 * How a review runs in each execution mode (README: Real use). CLI agents have no session a saga could
 * hand over, so the modes are expressed in what the reviewer run is and is told:
 * - `subagents`: a fresh, separate reviewer session per review — its own process, run folder and session id,
 *   never the author's transcript (`review-…` runs, reviewMode `fresh-session`).
 * - `inline` (also when `--subagents` was refused): the one agent carried across tasks reviews its own work —
 *   the same profile and one session id for the whole saga, the run labelled a self-review (`self-review-…`
 *   runs, reviewMode `self-review`). Lanes still run: each task has its own worktree and process.
 * The session id reaches the agent as SAGA_SESSION, so a profile whose CLI can resume sessions may use it.
 */
function reviewSession(ctx: SagaContext, id: string, iteration: number) {
  const inline = ctx.executionMode === 'inline';
  return {
    reviewMode: inline ? ('self-review' as const) : ('fresh-session' as const),
    labelPrefix: inline ? 'self-review' : 'review',
    session: inline ? `${ctx.name}-inline` : `${ctx.name}-${id}-review-i${iteration}`,
  };
}

/** What each answer does to a task: asked for by the user's judgement, so the prompt says it plainly. */
const TASK_CHECKPOINT_EFFECTS =
  '[F] Force accepts the work as it is; [C] Continue hands the findings back to the agent; [R] Revise ' +
  'manually hands it your note (--text); [E] Escalate ends this delegation with no further agent run and ' +
  'asks you how to go on (retry, edit the spec, skip, abort); [A] Abort stops the saga (work stays on ' +
  'the branches).';

export async function reviewLoop<T>(ctx: SagaContext, opts: ReviewLoopOptions<T>): Promise<ReviewOutcome> {
  const id = `${opts.subject}-${opts.taskId}`.replace(/[^a-z0-9-]/gi, '-').toLowerCase();
  if (opts.askCheckpoint !== false && (await openCheckpoint(ctx, opts)) === 'skip') return 'skipped';

  const history: IterationRecord[] = [];
  for (let iteration = 1; ; iteration++) {
    const left = opts.budgetLeft?.() ?? null;
    if (left !== null && left <= 0) {
      await sagaLog(ctx, `Review of ${id}, iteration ${iteration}: not started, the budget is spent`);
      return 'budget';
    }
    const review = await runReview(ctx, opts, { id, iteration, left });
    const decision = qualityDecision(review.counts, iteration, history);
    history.push(decision.iteration_record);
    await recordIteration(ctx, opts, id, decision.iteration_record, review.findingsPath);
    await sagaLog(ctx, `Review of ${id}, iteration ${iteration}: ${decision.action}`);
    if (decision.action === 'PASS') return 'pass';
    if (decision.action === 'REVISE') {
      await opts.onRevised(await opts.revise(review.summary, iteration));
      continue;
    }
    const answer = await askUnconverged(ctx, opts, {
      id,
      iteration,
      capped: decision.action === 'CAP_REACHED',
    });
    const key = answer.choice.slice(1, 2);
    if (key === 'F') return 'forced';
    if (key === 'A') return 'abort';
    if (key === 'E') return 'escalated';
    // [C] Continue hands the reviewer's findings back to the author; [R] the user's own revision note.
    await opts.onRevised(await opts.revise(key === 'R' ? (answer.text ?? '') : review.summary, iteration));
  }
}

/**
 * Before the first review: with both flags [A] Review is the only consistent choice (logged before the
 * review runs); otherwise the user decides at the checkpoint.
 */
async function openCheckpoint<T>(ctx: SagaContext, opts: ReviewLoopOptions<T>): Promise<'review' | 'skip'> {
  if (!(ctx.flags.autonomous && ctx.flags.quality_locked)) return userCheckpoint(ctx, opts);
  await activitiesFor(ctx).quick.logAutoPick({
    sagaDir: ctx.sagaDir,
    phase: opts.phase,
    checkpoint: opts.checkpoint,
    flags: ctx.flags,
  });
  // The auto-pick notice in place of the prompt (docs/PROCEDURE.md §9.9): the progress log and the CLI's watch show it.
  const notice = { name: ctx.name, sagaDir: ctx.sagaDir, checkpoint: opts.checkpoint, flags: ctx.flags };
  await sagaLog(ctx, autoPickLogLine(notice));
  return 'review';
}

/** One reviewer run, in the session the execution mode gives it; `left`: its budget (null: none). */
async function runReview<T>(
  ctx: SagaContext,
  opts: ReviewLoopOptions<T>,
  { id, iteration, left }: { id: string; iteration: number; left: number | null },
) {
  const session = reviewSession(ctx, id, iteration);
  return activitiesFor(ctx).long.runReviewer({
    sagaName: ctx.name,
    sagaDir: ctx.sagaDir,
    stage: opts.subject,
    taskId: opts.taskId,
    attempt: iteration,
    profile: profileFor(ctx),
    workdir: opts.workdir,
    context: {
      ...(typeof opts.context === 'function' ? opts.context() : opts.context),
      iteration,
      reviewMode: session.reviewMode,
    },
    extraEnv: { SAGA_SESSION: session.session, SAGA_REVIEW_MODE: session.reviewMode },
    runLabel: `${session.labelPrefix}-${id}-i${iteration}`,
    ...(left !== null ? { maxBudgetUsd: left } : {}),
  });
}

/** The manifest's quality-locked history gets each iteration. */
async function recordIteration<T>(
  ctx: SagaContext,
  opts: ReviewLoopOptions<T>,
  id: string,
  iteration: ReturnType<typeof qualityDecision>['iteration_record'],
  findings: string,
): Promise<void> {
  await activitiesFor(ctx).quick.updateManifest({
    sagaDir: ctx.sagaDir,
    patch: {
      quality_locked_history: [
        {
          subject: id,
          phase: opts.phase,
          checkpoint: opts.checkpoint,
          ...iteration,
          findings,
          timestamp: new Date().toISOString(),
        },
      ],
    },
    append: true,
  });
}

/** The review reached its cap or got stuck: an exception checkpoint, recorded in decisions.md. */
async function askUnconverged<T>(
  ctx: SagaContext,
  opts: ReviewLoopOptions<T>,
  { id, iteration, capped }: { id: string; iteration: number; capped: boolean },
): Promise<Answer> {
  const answer = await ask(ctx.sagaWorkflowId, {
    id: `${id}-${capped ? 'cap' : 'stuck'}-${iteration}`,
    kind: 'checkpoint',
    prompt:
      (capped
        ? `Quality-locked review of ${id} reached the cap of ${ITERATION_CAP} iterations without converging.`
        : `Quality-locked review of ${id} is stuck: the last three reviews found the same number of critical and major issues.`) +
      (opts.subject === 'task' ? ` ${TASK_CHECKPOINT_EFFECTS}` : ''),
    options: capped
      ? ['[F] Force', '[R] Revise manually', '[E] Escalate', '[A] Abort']
      : ['[E] Escalate', '[C] Continue', '[R] Revise manually'],
    recommended: null,
    textRequiredFor: ['[R] Revise manually'],
  });
  await activitiesFor(ctx).quick.prependDecision({
    sagaDir: ctx.sagaDir,
    entry: {
      at: new Date().toISOString(),
      title: `Quality-locked ${capped ? 'cap reached' : 'stuck'} at ${id}: ${answer.choice}`,
      lines: [
        `Decided by ${answer.user} at iteration ${iteration}.${answer.text ? ` Note: ${answer.text}` : ''}`,
      ],
    },
  });
  return answer;
}

/**
 * The normal approval checkpoint, asked until the user picks [A] Review or [S] Skip review: [R] and [N]
 * hand the artifact to its author (with the note, or afresh) and ask again.
 */
async function userCheckpoint<T>(ctx: SagaContext, opts: ReviewLoopOptions<T>): Promise<'review' | 'skip'> {
  const options = checkpointOptions({ revise: !!opts.reviseWithNote, newSession: !!opts.newSession });
  for (let n = 1; ; n++) {
    const answer = await ask(ctx.sagaWorkflowId, {
      id: checkpointInteractionId(opts.checkpoint, n),
      kind: 'checkpoint',
      prompt: `Quality-locked: review the ${opts.subject} before approval?`,
      options,
      recommended: 0,
      ...(opts.reviseWithNote ? { textRequiredFor: [CHECKPOINT_REVISE] } : {}),
    });
    const choice = checkpointChoice(answer.choice);
    if (choice === 'review' || choice === 'skip') return choice;
    await sagaLog(ctx, `${answer.choice} at ${opts.checkpoint}, by ${answer.user}`);
    const next =
      choice === 'revise' ? await opts.reviseWithNote!(answer.text ?? '', n) : await opts.newSession!(n);
    await opts.onRevised(next);
  }
}
