/**
 * The saga's status as users see it. The saga workflow keeps the phases, questions and log; while the
 * implementation phase runs, its own workflow keeps the task and milestone states (they change many times
 * per task, and a signal to the saga per change made its history four events longer each), so a reader
 * asks both and merges. Used by the CLI, the chat bridge and the PROGRESS.md projector alike.
 */
import type { Client } from '@temporalio/client';
import { phaseWorkflowId } from '../domain/contract/naming';
import { mergeLiveProgress } from '../domain/saga/phase-progress';
import type { SagaStatus } from '../domain/contract/state';
import { implementationProgressQuery, statusQuery } from '../domain/saga/messages';
import { withMilestoneRecords } from './milestone-records';

/** The status of the saga workflow `workflowId` (its latest run, or `runId`), live task states merged in. */
export async function queryLiveStatus(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<SagaStatus> {
  return withLiveProgress(client, await client.workflow.getHandle(workflowId, runId).query(statusQuery));
}

/**
 * `status` with the implementation phase's task states, usage and log merged in while it runs, and after a
 * saga that ended during it (cancelled, failed): a phase that completed handed them to the saga already. As
 * it is when that phase cannot answer (not started, or a run of older code, whose tasks the saga keeps).
 * Integrated milestones' task states come back from their record files.
 */
export async function withLiveProgress(client: Client, status: SagaStatus): Promise<SagaStatus> {
  return withMilestoneRecords(await withPhaseProgress(client, status));
}

async function withPhaseProgress(client: Client, status: SagaStatus): Promise<SagaStatus> {
  const ended = status.phase === 'cancelled' || status.phase === 'failed';
  if (status.phase !== 'implementation' && !ended) return status;
  const phase = client.workflow.getHandle(phaseWorkflowId(status.name, 'implementation', status.round));
  if (ended) {
    const closed = await phase.describe().then(
      (d) => d.status.name,
      () => 'NOT_FOUND',
    );
    if (closed === 'COMPLETED' || closed === 'NOT_FOUND') return status;
  }
  const live = await phase.query(implementationProgressQuery).catch(() => null);
  return live ? mergeLiveProgress(status, live) : status;
}
