/**
 * The saga past the old payload cliff: BENCH_HUGE_MILESTONES × BENCH_HUGE_TASKS instant tasks
 * (60 × 50 = 3,000 by default; 0 skips it) taken to acceptance, then every history of it read: the largest
 * payload as the server holds it (target < 512 KB, the SDK's warning) and before the payload store replaced
 * it (its logical size, for information), and the longest history (target < 10,240 events).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { performance } from 'node:perf_hooks';
import { sagaWorkflowId } from '../src/domain/contract/naming';
import { figure, type Figure } from './figures';
import { eventCount, largestPayloads } from './history';
import { accept, approveAndFinish, lanesEnv, numberEnv, startAndConfirm, writeScaleRepo } from './scale-saga';

type History = temporal.api.history.v1.IHistory;

const MILESTONES = numberEnv('BENCH_HUGE_MILESTONES', 60);
const TASKS = numberEnv('BENCH_HUGE_TASKS', 50);
const LANES = lanesEnv('BENCH_HUGE_LANES');
const PAYLOAD_WARNING = 512 * 1024;
export const HISTORY_EVENTS_LIMIT = 10_240;

/** Every workflow the saga ran (the saga and its children, recursively), each run, with its history. */
export async function sagaHistories(client: Client, name: string): Promise<Map<string, History>> {
  const all = new Map<string, History>();
  const visit = async (id: string) => {
    const history = await client.workflow.getHandle(id).fetchHistory();
    all.set(id, history);
    const children = (history.events ?? []).flatMap(
      (e) => e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId ?? [],
    );
    for (const child of children) if (!all.has(child)) await visit(child);
  };
  await visit(sagaWorkflowId(name));
  return all;
}

/**
 * Every run of each workflow id (continue-as-new makes several): the latest run's history alone would hide
 * the earlier runs' payloads and lengths.
 */
async function everyRun(client: Client, name: string): Promise<History[]> {
  const runs: History[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId STARTS_WITH '${sagaWorkflowId(name)}'` }))
    runs.push(await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory());
  return runs;
}

export async function hugeSagaFigures(
  client: Client,
  label: string,
  dir: (name: string) => string,
  progress: (line: string) => void,
): Promise<Figure[]> {
  if (MILESTONES * TASKS === 0) return [];
  const name = 'scale-huge';
  const total = MILESTONES * TASKS;
  const scenario = `${total} instant tasks (${MILESTONES}×${TASKS}), ${LANES} lanes`;
  progress(`${label}: ${name}: ${scenario}`);
  const started = performance.now();
  await startAndConfirm(client, writeScaleRepo(dir(name), name, MILESTONES, TASKS, 0), name, LANES);
  await approveAndFinish(client, name, 6 * 3_600_000);
  await accept(client, name);
  const wallS = (performance.now() - started) / 1000;
  progress(`${label}: ${name} accepted after ${wallS.toFixed(0)} s; reading every run's history`);
  const runs = await everyRun(client, name);
  const sizes = runs.map(largestPayloads);
  const stored = Math.max(...sizes.map((s) => s.stored));
  const logical = Math.max(...sizes.map((s) => s.logical));
  return [
    figure('huge_saga_to_acceptance_s', label, wallS, 's', null, scenario),
    figure(
      'huge_saga_payload_max_kb',
      label,
      stored / 1024,
      'KB',
      PAYLOAD_WARNING / 1024,
      `${runs.length} runs; as the server holds it`,
    ),
    figure(
      'huge_saga_payload_logical_max_kb',
      label,
      logical / 1024,
      'KB',
      null,
      'before the payload store (its plan is over the 256 KB threshold)',
    ),
    figure(
      'huge_saga_history_events_max',
      label,
      Math.max(...runs.map(eventCount)),
      'events',
      HISTORY_EVENTS_LIMIT,
      `${runs.length} runs of the ${total}-task saga`,
    ),
  ];
}
