/**
 * Takes a benchmark saga from start to completion the way a user would (confirm the name, approve the
 * plan, accept the result), then fetches the histories of every workflow it ran.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { prepareSaga, startSaga } from '../src/client/commands/start';
import { respond, waitForStatus } from '../src/client/saga-client';
import { phaseWorkflowId, sagaWorkflowId } from '../src/domain/contract/naming';
import type { SagaStatus } from '../src/domain/contract/state';
import type { BenchRepo } from './scenario';

export interface SagaRun {
  name: string;
  status: SagaStatus;
  /** workflow id → history; `tasks` holds the task workflows' ids. */
  histories: Map<string, temporal.api.history.v1.IHistory>;
  phases: Record<'saga' | 'planning' | 'implementation' | 'validation', string>;
  tasks: string[];
  /** Events of the saga workflow's runs together (it continues as new at phase boundaries). */
  sagaEvents: number;
  /** Interactions answered (confirm the name, approve the plan, accept). */
  answers: number;
}

/** Waits until the saga asks interaction `id`. */
const waitForPending = (client: Client, name: string, id: string, timeoutMs: number): Promise<SagaStatus> =>
  waitForStatus(client, name, (s) => s.pending.some((p) => p.id === id), { timeoutMs, pollMs: 400 });

/** Starts a saga of a bench repo with its plan file, its agents as subagents on `lanes` lanes. */
export async function startBenchSaga(
  client: Client,
  bench: BenchRepo,
  name: string,
  lanes: number,
  goal: string,
): Promise<void> {
  const input = await prepareSaga({
    repo: bench.repo,
    argumentsText: `--subagents --parallel=${lanes} ${goal}`,
    plan: bench.planFile,
    name,
    // The bench wrote this repository and its config (the timed agent): trusted, as --trust-repo-config says.
    trustRepoConfig: true,
  });
  await startSaga(client, input);
}

export async function runSaga(
  client: Client,
  bench: BenchRepo,
  name: string,
  lanes: number,
  timeoutMs = 240_000,
): Promise<SagaRun> {
  await startBenchSaga(client, bench, name, lanes, `Benchmark ${name}`);
  await waitForPending(client, name, 'confirm-name', 60_000);
  await respond(client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'bench' });
  await waitForPending(client, name, 'plan-approval-1', 60_000);
  await respond(client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'bench' });
  const status = await waitForPending(client, name, 'acceptance-1', timeoutMs);
  const blocked = status.milestones.flatMap((m) => m.tasks).filter((t) => t.status !== 'integrated');
  if (blocked.length > 0)
    throw new Error(
      `Saga ${name}: tasks not integrated: ${blocked.map((t) => `${t.id} ${t.status}`).join(', ')}`,
    );
  await respond(client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'bench' });
  await client.workflow.getHandle(sagaWorkflowId(name)).result();

  const phases = {
    saga: sagaWorkflowId(name),
    planning: phaseWorkflowId(name, 'planning'),
    implementation: phaseWorkflowId(name, 'implementation'),
    validation: phaseWorkflowId(name, 'validation'),
  };
  const tasks = status.milestones.flatMap((m) => m.tasks.map((t) => t.workflowId!));
  const histories = new Map<string, temporal.api.history.v1.IHistory>();
  await Promise.all(
    [...Object.values(phases), ...tasks].map(async (id) =>
      histories.set(id, await client.workflow.getHandle(id).fetchHistory()),
    ),
  );
  let sagaEvents = 0;
  for await (const run of client.workflow.list({ query: `WorkflowId = '${sagaWorkflowId(name)}'` }))
    sagaEvents +=
      (await client.workflow.getHandle(sagaWorkflowId(name), run.runId).fetchHistory()).events?.length ?? 0;
  return { name, status, histories, phases, tasks, sagaEvents, answers: 3 };
}
