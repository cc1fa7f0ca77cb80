/**
 * Replays a saga's histories in one `Worker.runReplayHistories` call (one replay worker, one bundle load)
 * with the prebuilt workflow bundle `npm run build` writes, and times each history.
 *
 * Profiling: `node dist/bench/replay.js DIR` replays the histories a `BENCH_DUMP=<dir>` run kept in DIR
 * (e.g. <dir>/bench-many) and prints the slowest ones.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { dataConverterFromEnv } from '../src/codec/config';
import { bundleSagaWorkflows, prebuiltWorkflowBundle } from '../src/worker/workflow-bundle';
import { eventCount } from './history';

export interface ReplayTiming {
  workflowId: string;
  events: number;
  /** From the moment the replay worker took the history to its result. */
  ms: number;
}

export interface ReplayResult {
  totalMs: number;
  /** Until the replay worker took the first history: creating it and loading the bundle. */
  setupMs: number;
  histories: ReplayTiming[];
  failures: string[];
  /** Which bundle: the prebuilt file, or one made here when it is missing or older than the code. */
  bundle: string;
  /** This process's CPU time during the replay: steadier than wall time on a machine shared with others. */
  cpuMs: { user: number; system: number };
}

export async function replayHistories(
  histories: Array<{ workflowId: string; history: temporal.api.history.v1.IHistory }>,
): Promise<ReplayResult> {
  const prebuilt = prebuiltWorkflowBundle();
  // Bundling is not replay work: a stale or missing prebuilt bundle is made before the clock starts.
  const workflowBundle = prebuilt ? { codePath: prebuilt } : { code: await bundleSagaWorkflows() };
  const takenAt = new Map<string, number>();
  // The replay worker pulls the next history only when the previous one is done: its pull time is its start.
  function* feed() {
    for (const h of histories) {
      takenAt.set(h.workflowId, performance.now());
      yield h;
    }
  }
  const timings: ReplayTiming[] = [];
  const failures: string[] = [];
  const start = performance.now();
  const cpuAtStart = process.cpuUsage();
  for await (const result of Worker.runReplayHistories(
    { workflowBundle, dataConverter: dataConverterFromEnv() },
    feed(),
  )) {
    const history = histories.find((h) => h.workflowId === result.workflowId)!.history;
    timings.push({
      workflowId: result.workflowId,
      events: eventCount(history),
      ms: performance.now() - takenAt.get(result.workflowId)!,
    });
    if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
  }
  const totalMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuAtStart);
  const first = histories[0] ? takenAt.get(histories[0].workflowId)! - start : 0;
  return {
    totalMs,
    setupMs: first,
    histories: timings,
    failures,
    cpuMs: { user: cpu.user / 1000, system: cpu.system / 1000 },
    bundle: prebuilt
      ? 'prebuilt dist/workflow-bundle.js'
      : 'bundled by the bench (prebuilt one stale or missing)',
  };
}

/** The slowest histories, one line each, for the profile the bench prints to stderr. */
export function slowest(result: ReplayResult, count = 5): string[] {
  return [...result.histories]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map((h) => `${h.workflowId}: ${Math.round(h.ms)} ms, ${h.events} events`);
}

async function main(dir: string): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const histories = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({
      workflowId: path.basename(f, '.json'),
      history: historyFromJSON(JSON.parse(readFileSync(path.join(dir, f), 'utf8'))),
    }));
  const result = await replayHistories(histories);
  const sum = result.histories.reduce((n, h) => n + h.ms, 0);
  process.stdout.write(
    `${histories.length} histories (${result.bundle}): total ${Math.round(result.totalMs)} ms, ` +
      `setup ${Math.round(result.setupMs)} ms, histories ${Math.round(sum)} ms, ${result.failures.length} failures; ` +
      `CPU ${Math.round(result.cpuMs.user)} ms user, ${Math.round(result.cpuMs.system)} ms system\n` +
      `${slowest(result, 10).join('\n')}\n`,
  );
}

if (require.main === module)
  main(process.argv[2] ?? '.').catch((error: unknown) => {
    process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
    process.exit(1);
  });
