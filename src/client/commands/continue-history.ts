/**
 * What `saga continue` reads from a run's history: what the run was started with, whether this code
 * replays it, and the saga's last state without replaying (for a run made by other code).
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { tsToDate } from '@temporalio/common/lib/time';
import { Worker } from '@temporalio/worker';
import type { SagaInput } from '../../domain/saga/saga-input';
import { migrateSagaState, withReportedProgress, type SagaState } from '../../domain/saga/saga-state';
import type { ProgressEvent } from '../../domain/contract/state';
import type { LiveProgress } from '../../domain/saga/phase-progress';
import { implementationProgressQuery } from '../../domain/saga/messages';
import {
  implementationWorkflow,
  type ImplementationInput,
  type ImplementationResult,
} from '../../workflows/fleet/implementation';
import { installRuntime } from '../../worker/worker';
import { workflowCode } from '../../worker/workflow-bundle';
import { dataConverterFromEnv } from '../../codec/config';
import { UserError } from '../errors';
import { fromRawPayload } from '../payloads';

export type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** What the run was started with: the saga's input, and the state it started from (none for a first run). */
export async function runStart(
  client: Client,
  name: string,
  history: History,
): Promise<{ input: SagaInput; state: unknown }> {
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  if (!payloads[0]) throw new UserError(`Saga '${name}' has no recorded input; it cannot be continued.`);
  return {
    input: await fromRawPayload<SagaInput>(client, payloads[0]),
    state: payloads[1] ? await fromRawPayload<unknown>(client, payloads[1]) : undefined,
  };
}

/**
 * Null when this code replays the run's history; else why not (the run was made by other code). Continuing
 * is a replay, so this is the replay a worker would make, done here first.
 */
export async function replayProblem(history: History, workflowId: string): Promise<string | null> {
  installRuntime();
  try {
    // An encrypted history replays only with the codec the worker uses.
    await Worker.runReplayHistory(
      { ...workflowCode(), dataConverter: dataConverterFromEnv() },
      history,
      workflowId,
    );
    return null;
  } catch (error) {
    if (error instanceof Error && error.name === 'DeterminismViolationError')
      return error.message.split('\n')[0] ?? error.message;
    throw error;
  }
}

/**
 * The saga's last state without replaying its code: the state its run started from (a phase boundary),
 * migrated to this version, with the progress its children reported since: signals from planning and
 * validation, each finished implementation phase's result, and the task states of one still open when the
 * run ended (`openPhase`). Null before a plan was approved.
 */
export async function stateFromHistory(
  client: Client,
  name: string,
  history: History,
  { openPhase = true }: { openPhase?: boolean } = {},
): Promise<SagaState | null> {
  const { state } = await runStart(client, name, history);
  if (state === undefined) return null;
  let start: SagaState;
  try {
    start = migrateSagaState(state);
  } catch (error) {
    throw new UserError(`Saga '${name}' cannot be continued: ${(error as Error).message}`);
  }
  type Reported = Parameters<typeof withReportedProgress>[1];
  const perEvent = await Promise.all(
    (history.events ?? []).map(async (e): Promise<Reported> => {
      const done = e.childWorkflowExecutionCompletedEventAttributes;
      if (done?.workflowType?.name === implementationWorkflow.name) {
        const result = done.result?.payloads?.[0];
        const live = result && (await fromRawPayload<ImplementationResult>(client, result)).progress;
        return live ? [{ live }] : [];
      }
      const signal = e.workflowExecutionSignaledEventAttributes;
      const payload = signal?.input?.payloads?.[0];
      if (!payload || (signal.signalName !== 'progress' && signal.signalName !== 'progressBatch')) return [];
      const at = e.eventTime ? tsToDate(e.eventTime).toISOString() : new Date(0).toISOString();
      const body = await fromRawPayload<ProgressEvent | ProgressEvent[]>(client, payload);
      return (Array.isArray(body) ? body : [body]).map((event) => ({ at, event }));
    }),
  );
  const reported = perEvent.flat();
  // Without `openPhase`, nothing asks a worker: the open phase's tasks are as the run started them.
  const live = openPhase ? await openImplementationProgress(client, history) : null;
  return withReportedProgress(start, live ? [...reported, { live }] : reported);
}

/** The task states of the implementation phase the run had started and not seen end, if there is one. */
export async function openImplementationProgress(
  client: Client,
  history: History,
): Promise<LiveProgress | null> {
  const open = openImplementation(history);
  return open ? implementationProgress(client, open) : null;
}

/** The implementation phase the run started and had not seen end (its workflow id), if any. */
function openImplementation(history: History): string | null {
  let open: string | null = null;
  for (const e of history.events ?? []) {
    const started = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (started?.workflowType?.name === implementationWorkflow.name) open = started.workflowId ?? null;
    const closed =
      e.childWorkflowExecutionCompletedEventAttributes ??
      e.childWorkflowExecutionFailedEventAttributes ??
      e.childWorkflowExecutionCanceledEventAttributes ??
      e.childWorkflowExecutionTerminatedEventAttributes ??
      e.childWorkflowExecutionTimedOutEventAttributes;
    if (closed?.workflowExecution?.workflowId === open) open = null;
  }
  return open;
}

/**
 * An implementation phase's task states as it last knew them: its `progress` query (a worker replays a
 * closed run); when its code cannot be replayed, the states its latest run started from.
 */
async function implementationProgress(client: Client, workflowId: string): Promise<LiveProgress | null> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    return await client.withDeadline(Date.now() + 30_000, () => handle.query(implementationProgressQuery));
  } catch {
    const first = (await handle.fetchHistory().catch(() => null))?.events?.[0];
    const payload = first?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const carried = payload && (await fromRawPayload<ImplementationInput>(client, payload)).carried;
    return carried ? { milestones: carried.milestones, usage: carried.usage, log: carried.log ?? [] } : null;
  }
}
