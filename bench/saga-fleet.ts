/**
 * Many sagas at once on one host: BENCH_FLEET_SAGAS (50) sagas of BENCH_FLEET_TASKS (10) tasks,
 * BENCH_FLEET_AGENT_MS (1 s) timed agents on BENCH_FLEET_LANES (2) lanes each, started together and taken
 * to acceptance on one worker process, then the same on two (both serve the same workflow and host queues,
 * as two `saga worker` processes for one host do). Each run has queues and workers of its own, so the
 * bench's main worker takes none of its work. Figures per run: sagas failed (target 0), tasks per minute,
 * the workers' own CPU-seconds per task (agents' processes not counted) and their peak RSS.
 * BENCH_FLEET_SAGAS=0 skips it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { startWorker, type BenchWorker } from './bench-worker';
import { figure, type Figure } from './figures';
import {
  accept,
  approveAndFinish,
  numberEnv,
  startAndConfirm,
  withOwnQueues,
  withSagaQueues,
  writeScaleRepo,
} from './scale-saga';

const SAGAS = numberEnv('BENCH_FLEET_SAGAS', 50);
const TASKS = numberEnv('BENCH_FLEET_TASKS', 10);
const AGENT_MS = numberEnv('BENCH_FLEET_AGENT_MS', 1_000);
const LANES = numberEnv('BENCH_FLEET_LANES', 2);
/** How long one saga may take from its start to acceptance (they share the host's slots). */
const SAGA_TIMEOUT_MS = 60 * 60_000;

const progress = (line: string) => process.stderr.write(`[saga-fleet] ${line}\n`);

/** One fleet run on `workerCount` worker processes; `env` is the bench worker's environment. */
async function fleetRun(
  label: string,
  client: Client,
  dir: string,
  env: NodeJS.ProcessEnv,
  workerCount: number,
): Promise<Figure[]> {
  const run = `fleet${workerCount}`;
  const fleetEnv = withOwnQueues(env, run);
  const names = Array.from({ length: SAGAS }, (_, i) => `scale-${run}-${i + 1}`);
  const repos = names.map((name) => {
    const sagaDir = path.join(dir, run, name);
    mkdirSync(sagaDir, { recursive: true });
    return writeScaleRepo(sagaDir, name, 1, TASKS, AGENT_MS);
  });
  const workers: BenchWorker[] = [];
  try {
    for (let i = 0; i < workerCount; i++) workers.push(await startWorker(fleetEnv));
    const cpuBefore = await Promise.all(workers.map(async (w) => (await w.peak()).cpuSeconds));
    progress(
      `${label}: ${SAGAS} sagas × ${TASKS} tasks of ${AGENT_MS} ms, ${LANES} lanes, ${workerCount} worker(s)`,
    );
    const started = performance.now();
    const starts = await withSagaQueues(fleetEnv, () =>
      Promise.allSettled(names.map((name, i) => startAndConfirm(client, repos[i]!, name, LANES))),
    );
    const outcomes = await Promise.allSettled(
      names.map(async (name, i) => {
        const start = starts[i]!;
        if (start.status === 'rejected') throw start.reason;
        await approveAndFinish(client, name, SAGA_TIMEOUT_MS);
        await accept(client, name);
      }),
    );
    const wallS = (performance.now() - started) / 1000;
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    for (const f of failed) progress(`${label}: a saga failed: ${String(f.reason)}`);
    const after = await Promise.all(workers.map((w) => w.peak()));
    const cpuSeconds = after.reduce((sum, p, i) => sum + p.cpuSeconds - cpuBefore[i]!, 0);
    const tasks = (SAGAS - failed.length) * TASKS;
    const scenario = `${SAGAS} sagas × ${TASKS} tasks of ${AGENT_MS / 1000}-s agents, ${LANES} lanes each, started together`;
    const stat = `${label}, ${workerCount} worker${workerCount === 1 ? '' : 's'}`;
    progress(
      `${stat}: ${failed.length} failed, ${tasks} tasks in ${wallS.toFixed(1)} s, ${cpuSeconds.toFixed(1)} CPU-s`,
    );
    return [
      figure('fleet_sagas_failed', stat, failed.length, 'sagas', 1, scenario),
      figure(
        'fleet_tasks_per_min',
        stat,
        (tasks / wallS) * 60,
        'tasks/min',
        null,
        `${scenario}; start to the last acceptance`,
        'higher',
      ),
      figure(
        'fleet_worker_cpu_ms_per_task',
        stat,
        (cpuSeconds * 1000) / Math.max(tasks, 1),
        'CPU-ms',
        null,
        `${scenario}; the worker processes' own CPU`,
      ),
      figure(
        'fleet_worker_peak_rss_mb',
        stat,
        Math.max(...after.map((p) => p.overall)) / 2 ** 20,
        'MB',
        null,
        `${scenario}; the largest worker`,
      ),
      figure('fleet_wall_s', stat, wallS, 's', null, scenario),
    ];
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

/** The fleet on one worker, then on two. */
export async function sagaFleetFigures(
  label: string,
  client: Client,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<Figure[]> {
  if (SAGAS <= 0) return [];
  const figures: Figure[] = [];
  for (const workerCount of [1, 2]) figures.push(...(await fleetRun(label, client, dir, env, workerCount)));
  return figures;
}
