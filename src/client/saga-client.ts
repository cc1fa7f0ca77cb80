/**
 * Everything a caller (CLI, chat bridge, tests) does to a saga, addressed by its name.
 * Errors are UserError (bad input, unknown saga) or EnvironmentError (no server).
 */
import {
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { failureReason } from '../domain/saga/failure';
import { sagaNameFromWorkflowId, sagaWorkflowId } from '../domain/contract/naming';
import { SagaName, SagaPhase, SagaAwaitingInput } from '../domain/contract/search-attributes';
import type { Answer, InteractionKind, RespondInput, SagaStatus } from '../domain/contract/state';
import { respondUpdate, statusQuery } from '../domain/saga/messages';
import { queryLiveStatus, withLiveProgress } from '../status/live-status';
import { UserError } from './errors';

export class RespondRefused extends UserError {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export async function describeSaga(client: Client, name: string): Promise<WorkflowExecutionDescription> {
  try {
    return await client.workflow.getHandle(sagaWorkflowId(name)).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) {
      throw new UserError(`No saga named '${name}'. See \`saga list\` for the sagas this server knows.`);
    }
    throw error;
  }
}

/**
 * The saga's status (a query, answered by a worker; a closed run's by replaying its history). A run ended
 * from outside its own code (terminated, timed out) shows the phase it was in and no error, so it is
 * reported `failed` here with the reason its close event gives.
 */
export async function getStatus(client: Client, name: string): Promise<SagaStatus> {
  // The query goes out with the description (one round trip, not two); a missing saga is named by describe.
  const query = client.workflow.getHandle(sagaWorkflowId(name)).query(statusQuery);
  query.catch(() => undefined);
  const desc = await describeSaga(client, name);
  const status = await withLiveProgress(client, await query);
  const ended = desc.status.name;
  if (!ENDED_BADLY.includes(ended) || status.error || ['complete', 'cancelled'].includes(status.phase))
    return status;
  return { ...status, phase: 'failed', error: await closeReason(client, name, desc) };
}

const ENDED_BADLY = ['FAILED', 'TERMINATED', 'TIMED_OUT'];

/** Why the run closed, from its close event ("Terminated: <reason>"...). */
async function closeReason(
  client: Client,
  name: string,
  desc: WorkflowExecutionDescription,
): Promise<string> {
  const reason = await client.workflow
    .getHandle(sagaWorkflowId(name), desc.runId, { followRuns: false })
    .result()
    .then(
      () => 'no reason recorded',
      (error: unknown) => failureReason(error),
    );
  switch (desc.status.name) {
    case 'TERMINATED':
      return `Terminated: ${reason}`;
    case 'TIMED_OUT':
      return 'Timed out: the workflow execution timeout passed';
    default:
      return reason;
  }
}

/**
 * Polls the saga's status until `predicate` holds; fails naming the last phase, pending interactions and
 * log lines seen (or the last error, e.g. no worker answering the query).
 */
export async function waitForStatus(
  client: Client,
  name: string,
  predicate: (status: SagaStatus) => boolean,
  { timeoutMs = 90_000, pollMs = 300 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<SagaStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: SagaStatus | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await queryLiveStatus(client, sagaWorkflowId(name));
      if (predicate(last)) return last;
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  const seen = last
    ? JSON.stringify({ phase: last.phase, pending: last.pending.map((p) => p.id), log: last.log.slice(0, 8) })
    : String(lastError);
  throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for saga ${name}. Last status: ${seen}`);
}

/** gRPC FAILED_PRECONDITION: the server aborted the update because the workflow task it rode in failed. */
const abortedWithWorkflowTask = (error: unknown): boolean =>
  error instanceof ServiceError && (error.cause as { code?: number } | undefined)?.code === 9;

export async function respond(client: Client, name: string, input: RespondInput): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.workflow
        .getHandle(sagaWorkflowId(name))
        .executeUpdate(respondUpdate, { args: [input] });
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
        throw new RespondRefused(error.cause.type ?? 'Refused', error.cause.message);
      }
      // No running saga by that name: the description says which (one round trip only on this path).
      if (error instanceof WorkflowNotFoundError) {
        const desc = await describeSaga(client, name);
        throw new UserError(
          `Saga '${name}' is not running any more (${desc.status.name}); nothing waits for an answer.`,
        );
      }
      // The update never reached the workflow: safe to send again (the validator refuses duplicates).
      if (abortedWithWorkflowTask(error) && attempt < 4) {
        await new Promise((r) => setTimeout(r, 300 * attempt));
        continue;
      }
      throw error;
    }
  }
}

/** Cancels a running saga, as `saga cancel` (the CLI, the board): agents stopped, work committed, worktrees removed. */
export async function cancelSaga(client: Client, name: string): Promise<void> {
  const desc = await describeSaga(client, name);
  if (desc.status.name !== 'RUNNING')
    throw new UserError(`Saga '${name}' is not running any more (${desc.status.name}).`);
  await client.workflow.getHandle(sagaWorkflowId(name)).cancel();
}

/** Answers the one pending interaction of a kind (approve, accept, report...). */
export async function respondToKind(
  client: Client,
  name: string,
  kind: InteractionKind,
  choice: string,
  extra: { text?: string; user?: string } = {},
): Promise<Answer> {
  const status = await getStatus(client, name);
  const pending = status.pending.filter((p) => p.kind === kind);
  if (pending.length === 0) {
    const waiting = status.pending.map((p) => `${p.id} (${p.kind})`).join(', ') || 'nothing';
    throw new UserError(`Saga '${name}' is not waiting for ${kind}; it waits for: ${waiting}.`);
  }
  return respond(client, name, { interactionId: pending[0]!.id, choice, ...extra });
}

export interface SagaListEntry {
  name: string;
  workflowId: string;
  status: string;
  phase: string | null;
  awaitingInput: boolean;
  startTime: string;
}

export async function listSagas(client: Client): Promise<SagaListEntry[]> {
  const out: SagaListEntry[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'sagaWorkflow'` })) {
    const attrs = wf.typedSearchAttributes;
    const name = attrs.get(SagaName) ?? sagaNameFromWorkflowId(wf.workflowId) ?? wf.workflowId;
    if (out.some((e) => e.workflowId === wf.workflowId)) continue;
    out.push({
      name,
      workflowId: wf.workflowId,
      status: wf.status.name,
      phase: attrs.get(SagaPhase) ?? null,
      // A saga cancelled or terminated while it waited keeps the attribute's last value: it waits no more.
      awaitingInput: wf.status.name === 'RUNNING' && (attrs.get(SagaAwaitingInput) ?? false),
      startTime: wf.startTime.toISOString(),
    });
  }
  return out;
}
