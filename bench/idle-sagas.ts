/**
 * What sagas that wait cost their host (`npm run bench:fleet`): the worker's own CPU, as a share of one
 * core, over BENCH_IDLE_WINDOW_S (30 s) with no saga, then with BENCH_IDLE_SAGAS (20) small sagas waiting for
 * plan approval. Their work then is their PROGRESS.md projectors' status reads (a query each, answered by the
 * same worker). The sagas wait 10 s before the window, so the projectors have slowed to their idle pace.
 * BENCH_IDLE_SAGAS=0 skips it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { startWorker, type BenchWorker } from './bench-worker';
import { figure, type Figure } from './figures';
import { numberEnv, startAndConfirm, withOwnQueues, withSagaQueues, writeScaleRepo } from './scale-saga';

const SAGAS = numberEnv('BENCH_IDLE_SAGAS', 20);
const WINDOW_MS = numberEnv('BENCH_IDLE_WINDOW_S', 30) * 1_000;
const SETTLE_MS = 10_000;

/** The worker's CPU over the next WINDOW_MS, in % of one core. */
async function cpuPercent(worker: BenchWorker): Promise<number> {
  const before = (await worker.peak()).cpuSeconds;
  const started = performance.now();
  await sleep(WINDOW_MS);
  const seconds = (performance.now() - started) / 1_000;
  return (((await worker.peak()).cpuSeconds - before) / seconds) * 100;
}

export async function idleSagaFigures(
  client: Client,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<Figure[]> {
  if (SAGAS <= 0) return [];
  // Queues of its own, so no other worker answers these sagas' queries.
  const idleEnv = withOwnQueues(env, 'idle');
  const worker = await startWorker(idleEnv);
  try {
    const none = await cpuPercent(worker);
    await withSagaQueues(idleEnv, () =>
      Promise.all(
        Array.from({ length: SAGAS }, async (_, i) => {
          const name = `idle-${i + 1}`;
          const sagaDir = path.join(dir, 'idle', name);
          mkdirSync(sagaDir, { recursive: true });
          await startAndConfirm(client, writeScaleRepo(sagaDir, name, 2, 3, 0), name, 2);
        }),
      ),
    );
    await sleep(SETTLE_MS);
    const waiting = await cpuPercent(worker);
    const scenario = `the worker's own CPU over ${WINDOW_MS / 1_000} s, ${SAGAS} sagas waiting for plan approval`;
    return [
      figure('idle_worker_cpu_percent', 'no saga', none, '% of a core', null, scenario),
      figure('idle_worker_cpu_percent', `${SAGAS} sagas waiting`, waiting, '% of a core', null, scenario),
      figure(
        'idle_worker_cpu_percent',
        'per waiting saga',
        (waiting - none) / SAGAS,
        '% of a core',
        null,
        scenario,
      ),
    ];
  } finally {
    await worker.stop();
  }
}
