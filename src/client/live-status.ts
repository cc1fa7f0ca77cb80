/**
 * The saga's status as users see it. The saga workflow keeps the phases, questions and log; while the
 * implementation phase runs, its own workflow keeps the task and milestone states (they change many times
 * per task, and a signal to the saga per change made its history four events longer each), so a reader
 * asks both and merges. Used by the CLI, the chat bridge and the PROGRESS.md projector alike.
 */
import type { Client } from '@temporalio/client';
import { phaseWorkflowId } from '../domain/naming';
import { mergeLiveProgress } from '../domain/progress';
import type { SagaStatus } from '../domain/state';
import { implementationProgressQuery, statusQuery } from '../workflows/definitions';

/** The status of the saga workflow `workflowId` (its latest run, or `runId`), live task states merged in. */
export async function queryLiveStatus(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<SagaStatus> {
  return withLiveProgress(client, await client.workflow.getHandle(workflowId, runId).query(statusQuery));
}

/**
 * `status` with the running implementation phase's task states, usage and log merged in; as it is when that
 * phase cannot answer (not started yet, or a run of older code, whose tasks the saga itself keeps).
 */
export async function withLiveProgress(client: Client, status: SagaStatus): Promise<SagaStatus> {
  if (status.phase !== 'implementation') return status;
  const phase = client.workflow.getHandle(phaseWorkflowId(status.name, 'implementation', status.round));
  const live = await phase.query(implementationProgressQuery).catch(() => null);
  return live ? mergeLiveProgress(status, live) : status;
}
