/**
 * The saga's projection (PROGRESS.md and the spec tree) from the saga's own queries: the workflow passes only
 * its id, so the (growing) status and the plan never travel through history as an activity input. Uses the
 * worker's client from the activity context.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ExitCriterionResult } from '../../domain/record/completion-report';
import { writeSagaReport } from './saga-report';
import type { SagaState } from '../../domain/saga/saga-state';
import type { Answer, SagaStatus } from '../../domain/contract/state';
import { answerDecisionEntry } from '../../domain/saga/interactions';
import { queryLiveStatus } from '../../status/live-status';
import { answersQuery, carryQuery } from '../../domain/saga/messages';
import type { createArtifactActivities } from './';
import type { createGitActivities } from '../git';

type Artifacts = ReturnType<typeof createArtifactActivities>;

/** How often the projector reads the saga's status, and how long one projector activity runs. */
const PROJECT_EVERY_MS = 1_000;
const PROJECT_FOR_MS = 20 * 60_000;
/** The longest wait between reads of a saga that does not change (one waiting for an answer, a long agent). */
const PROJECT_IDLE_MS = 5_000;

/**
 * The wait before the projector's next read: `every` after a change, then twice the last wait while nothing
 * changes, up to PROJECT_IDLE_MS. A status read is a query the saga's worker answers: twenty sagas waiting for
 * answers, read every second, cost their worker a tenth of a core; PROGRESS.md lags a change by 5 s at most.
 */
export function nextProjectorWait(last: number, changed: boolean, every = PROJECT_EVERY_MS): number {
  return changed ? every : Math.min(last * 2, Math.max(every, PROJECT_IDLE_MS));
}

/**
 * Writes of one saga directory, in order, in this worker: a write the saga asked for (its last state) bumps
 * the generation, so a projector write of a status read before it is dropped, never written over it.
 */
const generations = new Map<string, number>();
const queues = new Map<string, Promise<unknown>>();
function serialized<T>(sagaDir: string, write: () => Promise<T>): Promise<T> {
  const next = (queues.get(sagaDir) ?? Promise.resolve()).then(write, write);
  queues.set(
    sagaDir,
    next.catch(() => undefined),
  );
  return next;
}

/** Longest a projector query may take: a saga whose worker is gone must not hold up the projector. */
const QUERY_DEADLINE_MS = 5_000;

async function readSaga(client: Client, workflowId: string, runId?: string) {
  const handle = client.workflow.getHandle(workflowId, runId);
  const status = await queryLiveStatus(client, workflowId, runId);
  return { handle, status };
}

/** Answers this worker has put in decisions.md, per saga directory (prependDecision skips one already there). */
const recordedAnswers = new Map<string, Set<string>>();

/** The saga's answers; none (and a warning) from a run whose code has no answers query. */
async function answersOf(handle: ReturnType<Client['workflow']['getHandle']>): Promise<Answer[]> {
  try {
    return await handle.query(answersQuery);
  } catch (error) {
    log.warn('No answers for decisions.md from the saga', { error: String(error) });
    return [];
  }
}

/** One decisions.md entry per answer not yet recorded by this worker, oldest first (the file lists newest first). */
async function recordAnswers(artifacts: Artifacts, sagaDir: string, answers: Answer[]): Promise<void> {
  const done = recordedAnswers.get(sagaDir) ?? new Set<string>();
  recordedAnswers.set(sagaDir, done);
  for (const answer of answers) {
    const key = `${answer.interactionId} ${answer.answeredAt}`;
    if (done.has(key)) continue;
    await artifacts.prependDecision({ sagaDir, entry: answerDecisionEntry(answer) });
    done.add(key);
  }
}

/**
 * Brings decisions.md up to the saga's answers now, before something reads it (the autonomous planner's
 * pre-flight): the projector records answers a second or so after they come.
 */
export async function recordSagaAnswers(
  artifacts: Artifacts,
  input: { client: Client; sagaDir: string; workflowId: string },
): Promise<void> {
  const answers = await answersOf(input.client.workflow.getHandle(input.workflowId));
  await serialized(input.sagaDir, () => recordAnswers(artifacts, input.sagaDir, answers));
}

type Git = ReturnType<typeof createGitActivities>;

interface ProgressDeps {
  artifacts: Artifacts;
  cleanupSagaWorktrees: Git['cleanupSagaWorktrees'];
  hostStopping?: AbortSignal;
}

/** The saga's run, as the workflow names it (its status and plan are read through its queries). */
interface SagaRun {
  sagaDir: string;
  workflowId: string;
  runId: string;
}

/** PROGRESS.md and, with the approved plan (`carry`), the spec tree. */
const writeProjection = (
  artifacts: Artifacts,
  sagaDir: string,
  status: SagaStatus,
  carry: SagaState | null,
) =>
  artifacts.writeProgress({
    sagaDir,
    status,
    ...(carry ? { plan: carry.plan, environment: carry.environment } : {}),
  });

/** One write of the saga's projection, of its state now; `line` (stamped) is the newest log line. */
async function snapshot(
  artifacts: Artifacts,
  input: SagaRun,
  line: string | null = null,
): Promise<{ path: string }> {
  generations.set(input.sagaDir, (generations.get(input.sagaDir) ?? 0) + 1);
  const { handle, status } = await readSaga(Context.current().client, input.workflowId, input.runId);
  // The approved plan (with any acceptance milestones) and environment; null before approval.
  const carry = await handle.query(carryQuery).catch(() => null);
  const answers = await answersOf(handle);
  const shown = line ? { ...status, log: [line, ...status.log] } : status;
  return serialized(input.sagaDir, async () => {
    await recordAnswers(artifacts, input.sagaDir, answers);
    return writeProjection(artifacts, input.sagaDir, shown, carry);
  });
}

/**
 * The saga's end in one activity (one, not two, in its history): its worktrees removed (dirty ones kept,
 * branches stay), then PROGRESS.md's last write. The log line about kept worktrees is returned as it was
 * written, so the saga's log holds the very same line.
 */
async function finishSagaRun(
  deps: ProgressDeps,
  input: SagaRun & { repo: string; sagaName: string },
): Promise<{ kept: { path: string; reason: string }[]; logLine: string | null }> {
  const { kept } = await deps.cleanupSagaWorktrees({ repo: input.repo, sagaName: input.sagaName });
  const logLine = kept.length
    ? `${new Date().toISOString()} Kept worktrees with uncommitted work: ${kept.map((k) => k.path).join(', ')}`
    : null;
  await snapshot(deps.artifacts, input, logLine);
  return { kept, logLine };
}

/**
 * Keeps PROGRESS.md a projection of the running saga: reads its status every second (less often while it
 * does not change: nextProjectorWait) and writes the files when it changed, for PROJECT_FOR_MS or until
 * cancelled. One activity per run (heartbeats add no history events) instead of one per change keeps the
 * saga's history small. Reads the latest run of the saga, so a projector left over from a run that continued
 * as new never writes an older state. When its host starts to shut down (`hostStopping`: Ctrl-C of `saga
 * dev`) it ends at once, its query in flight too: the saga's workflow worker stops with it, so that query
 * could only time out, and the worker's grace period would wait for it. The saga starts a projector again,
 * on the host's next worker.
 */
async function projectProgress(
  artifacts: Artifacts,
  input: { sagaDir: string; workflowId: string; everyMs?: number },
  hostStopping: AbortSignal = new AbortController().signal,
): Promise<void> {
  const ctx = Context.current();
  const until = Date.now() + PROJECT_FOR_MS;
  const stop = AbortSignal.any([ctx.cancellationSignal, hostStopping]);
  let written = '';
  /** The plan changes only when a round starts or planning publishes a version: read it then. */
  let planKey = '';
  let carry: SagaState | null = null;
  const every = input.everyMs ?? PROJECT_EVERY_MS;
  let wait = every;
  // Queries end when the activity is cancelled (the saga moved on, the worker shuts down) or take too long.
  const bounded = <T>(query: () => Promise<T>) =>
    ctx.client.withAbortSignal(stop, () => ctx.client.withDeadline(Date.now() + QUERY_DEADLINE_MS, query));
  while (Date.now() < until && !hostStopping.aborted) {
    const generation = generations.get(input.sagaDir) ?? 0;
    try {
      const { handle, status } = await bounded(() => readSaga(ctx.client, input.workflowId));
      const nextPlanKey = JSON.stringify([status.runId, status.round, status.planSummary]);
      if (nextPlanKey !== planKey) {
        carry = await bounded(() => handle.query(carryQuery)).catch(() => null);
        planKey = nextPlanKey;
      }
      const key = JSON.stringify(status);
      wait = nextProjectorWait(wait, key !== written, every);
      if (key !== written) {
        // An answer adds a log line, so the status changes with every answer.
        const answers = await bounded(() => answersOf(handle));
        await serialized(input.sagaDir, async () => {
          await recordAnswers(artifacts, input.sagaDir, answers);
          if ((generations.get(input.sagaDir) ?? 0) === generation)
            await writeProjection(artifacts, input.sagaDir, status, carry);
        });
        written = key;
      }
    } catch (error) {
      // Cancelled (the saga moved on, the worker shuts down): end as cancelled, not as the query's failure
      // (which the SDK would log as a failed activity, at the end of every demo).
      if (ctx.cancellationSignal.aborted) throw (ctx.cancellationSignal.reason as unknown) ?? error;
      if (hostStopping.aborted) return;
      // A slow query or a full disk: the next round tries again (the saga's own writes report failures).
      log.warn('PROGRESS.md projection failed', { error: String(error), sagaDir: input.sagaDir });
    }
    ctx.heartbeat();
    try {
      await sleepBeating(ctx, wait, stop);
    } catch (error) {
      if (ctx.cancellationSignal.aborted) throw (ctx.cancellationSignal.reason as unknown) ?? error;
    }
  }
}

/** How often a sleeping projector heartbeats: the saga's end waits for its cancellation, which comes with one. */
const BEAT_EVERY_MS = 1_000;

async function sleepBeating(ctx: Context, ms: number, signal: AbortSignal): Promise<void> {
  for (let left = ms; left > 0; left -= BEAT_EVERY_MS) {
    await sleep(Math.min(left, BEAT_EVERY_MS), undefined, { signal });
    ctx.heartbeat();
  }
}

export function createProgressActivities(deps: ProgressDeps) {
  return {
    /** One write of the saga's projection, of its state now (a failure). */
    writeProgressSnapshot: (input: SagaRun) => snapshot(deps.artifacts, input),
    finishSagaRun: (input: SagaRun & { repo: string; sagaName: string }) => finishSagaRun(deps, input),
    writeSagaReport: (input: SagaRun & { exitResults: ExitCriterionResult[] }) =>
      writeSagaReport(deps.artifacts, input),
    projectProgress: (input: { sagaDir: string; workflowId: string; everyMs?: number }) =>
      projectProgress(deps.artifacts, input, deps.hostStopping),
  };
}
