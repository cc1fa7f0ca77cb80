/**
 * `npm run bench`: what the orchestration costs. Starts its own dev server (temp database) and a saga
 * worker in a child process, runs benchmark sagas with the timed agent, a naive sequential baseline, and a
 * replay of a 100-task saga's histories; prints one JSON object per figure (the benchmark output contract), then a table.
 * Progress goes to stderr so stdout holds only the figures.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { dataConverterFromEnv } from '../src/codec/config';
import { idealMakespan, lowerBoundMakespan } from '../src/domain/fleet/schedule';
import { installRuntime } from '../src/worker/worker';
import { runNaiveBaseline } from './baseline';
import { cliStartupFigures } from './cli-startup';
import { runSaga, type SagaRun } from './drive';
import { forgeFigures } from './forge';
import { sandboxFigures } from './sandbox';
import { figure, figureLine, quantile, table, type Figure } from './figures';
import {
  eventCount,
  implementationTimings,
  largestPayload,
  taskOverheads,
  type TaskOverhead,
} from './history';
import { interactionLatency } from './interaction';
import { replayHistories, slowest } from './replay';
import { flatDag, layeredDag, readAgentLog, writeBenchRepo, type Dag } from './scenario';
import { startBenchServer, startWorker, type BenchWorker } from './bench-worker';

const AGENT_MS = 2_000;
/**
 * BENCH_LANES=4 runs only the 4-lane scenario, BENCH_DUMP=<dir> keeps every history as JSON (profiling),
 * BENCH_START_SAMPLES=<n> sets how many sagas the start → first question figure starts (default 10).
 */
const LANES = (process.env.BENCH_LANES ?? '1,2,4').split(',').map(Number);
/**
 * The makespan with long agents: the same DAG at 4 lanes with BENCH_LONG_AGENT_MS agents (default 30 s),
 * where the orchestration's fixed cost per task weighs as it does in real sagas. 0 skips it; BENCH_QUICK=1
 * skips it unless BENCH_LONG_AGENT_MS is set; BENCH_LONG_ONLY=1 runs it alone (with the machine's load).
 */
const LONG_AGENT_MS = Number(process.env.BENCH_LONG_AGENT_MS ?? (process.env.BENCH_QUICK ? 0 : 30_000));
const LONG_LANES = 4;
const LONG_ONLY = Boolean(process.env.BENCH_LONG_ONLY);
const MANY_TASKS = 100;
/** Temporal's own warning thresholds: history event count and payload (blob) size. */
const HISTORY_COUNT_WARN = 10_240;
const BLOB_SIZE_WARN = 512 * 1024;

const progress = (line: string) =>
  process.stderr.write(`[bench ${Math.round(process.uptime())} s] ${line}\n`);

function dumpHistories(run: SagaRun, agentLog: string): void {
  const dir = process.env.BENCH_DUMP;
  if (!dir) return;
  mkdirSync(path.join(dir, run.name), { recursive: true });
  copyFileSync(agentLog, path.join(dir, run.name, 'agents.jsonl'));
  for (const [id, history] of run.histories)
    writeFileSync(path.join(dir, run.name, `${id}.json`), historyToJSON(history));
}

/** The saga workflow's events (its runs together) against the lean-parent budget (bench/README.md). */
function leanParentFigure(run: SagaRun, label: string): Figure {
  const budget = 40 + 6 * run.tasks.length + 10 * run.answers;
  return figure(
    'saga_history_events',
    label,
    run.sagaEvents,
    'events',
    budget + 1,
    `all runs; budget 40 + 6 x ${run.tasks.length} tasks + 10 x ${run.answers} answers = ${budget}`,
  );
}

/** A lane scenario's makespan (implementation start → last task child completed) against the ideal. */
function makespanFigures(
  run: SagaRun,
  dag: Dag,
  lanes: number,
  agentMs: number,
  label: string,
  target: number | null,
) {
  const timings = implementationTimings(run.histories.get(run.phases.implementation)!);
  const makespan = Math.max(...timings.children.map((c) => c.completedAt)) - timings.startedAt;
  const ideal = idealMakespan(dag.durations, dag.deps, lanes);
  const bound = lowerBoundMakespan(dag.durations, dag.deps, lanes);
  return {
    timings,
    figures: [
      figure(
        'makespan_ratio_to_ideal',
        label,
        makespan / ideal,
        'ratio',
        target,
        `8 tasks of ${agentMs} ms, 3 levels deep; ideal ${ideal} ms`,
      ),
      figure('makespan_ms', label, makespan, 'ms', null, `ideal ${ideal} ms, lower bound ${bound} ms`),
    ],
  };
}

function overheadFigures(
  prefix: string,
  scenario: string,
  samples: TaskOverhead[],
  target: number | null,
): Figure[] {
  const series: [string, number[], number | null][] = [
    [`${prefix}_per_task_ms`, samples.map((s) => s.startMs + s.reportMs), target],
    [`${prefix}_ready_to_agent_start_ms`, samples.map((s) => s.startMs), null],
    [`${prefix}_agent_exit_to_reported_ms`, samples.map((s) => s.reportMs), null],
  ];
  return series.flatMap(([name, values, goal]) => [
    figure(name, 'median', quantile(values, 0.5), 'ms', goal, scenario),
    figure(name, 'p95', quantile(values, 0.95), 'ms', null, scenario),
  ]);
}

async function main(): Promise<void> {
  const benchStart = Date.now();
  // Other work on the machine inflates every timing figure: the load is printed with them.
  const loadAtStart = os.loadavg()[0]!;
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-bench-'));
  installRuntime();
  progress(`starting the dev server and a worker process (temp folder ${root})`);
  const { server, sagaEnv } = await startBenchServer(root, 'bench');
  let worker: BenchWorker | undefined;
  let connection: Connection | undefined;
  const figures: Figure[] = [];
  try {
    const benchWorker = await startWorker({ ...process.env, ...sagaEnv, TEMPORAL_ADDRESS: server.address });
    worker = benchWorker;
    connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFromEnv() });
    const scenario = (label: string) => {
      const dir = path.join(root, label);
      mkdirSync(dir);
      return dir;
    };

    /** The same DAG on 4 lanes with long agents (BENCH_LONG_AGENT_MS): its makespan against the ideal. */
    async function longMakespan(): Promise<Figure[]> {
      const name = `bench-long-${LONG_LANES}`;
      const longDag = layeredDag(LONG_AGENT_MS);
      progress(`${name}: 8 tasks of ${LONG_AGENT_MS} ms, ${LONG_LANES} lanes`);
      const bench = writeBenchRepo(scenario(name), name, longDag);
      const ideal = idealMakespan(longDag.durations, longDag.deps, LONG_LANES);
      const run = await runSaga(client, bench, name, LONG_LANES, 3 * ideal + 240_000);
      dumpHistories(run, bench.agentLog);
      const label = `${LONG_LANES} lanes, ${LONG_AGENT_MS / 1000}-s agents`;
      return makespanFigures(run, longDag, LONG_LANES, LONG_AGENT_MS, label, 1.03).figures;
    }

    if (LONG_ONLY) figures.push(...(await longMakespan()));
    else await everyScenario();

    async function everyScenario(): Promise<void> {
      // Makespan with 2-second agents on 1, 2 and 4 lanes; the worker's memory during the 4-lane run.
      const dag = layeredDag(AGENT_MS);
      const overheads: TaskOverhead[] = [];
      const runs: SagaRun[] = [];
      const implementationMs = new Map<number, number>();
      let rss4: number | null = null;
      for (const lanes of LANES) {
        const name = `bench-lanes-${lanes}`;
        progress(`${name}: 8 tasks of ${AGENT_MS} ms, ${lanes} lane(s)`);
        const bench = writeBenchRepo(scenario(name), name, dag);
        if (lanes === 4) benchWorker.resetPeak();
        const run = await runSaga(client, bench, name, lanes);
        if (lanes === 4) rss4 = (await benchWorker.peak()).rss;
        runs.push(run);
        dumpHistories(run, bench.agentLog);
        const label = `${lanes} lane${lanes === 1 ? '' : 's'}`;
        const made = makespanFigures(run, dag, lanes, AGENT_MS, label, lanes === 4 ? 1.1 : null);
        const { timings } = made;
        implementationMs.set(lanes, timings.closedAt - timings.startedAt);
        figures.push(...made.figures);
        overheads.push(...taskOverheads(timings, dag.deps, lanes, readAgentLog(bench.agentLog)));
        figures.push(leanParentFigure(run, label));
      }
      figures.unshift(
        ...overheadFigures(
          'overhead',
          `${overheads.length} tasks of ${AGENT_MS} ms on ${LANES.join('/')} lane${LANES.length === 1 && LANES[0] === 1 ? '' : 's'}`,
          overheads,
          150,
        ),
      );
      if (LONG_AGENT_MS > 0) figures.push(...(await longMakespan()));

      const cliEnv = { ...process.env, ...sagaEnv, TEMPORAL_ADDRESS: server.address };
      const interactions = await interactionLatency(client, scenario('interaction'), cliEnv);
      figures.push(...interactions.figures);

      progress('CLI start-up: saga --help, saga flags parse, saga status --json against node -e 0');
      figures.push(
        ...cliStartupFigures(
          cliEnv,
          { running: interactions.runningSaga, finished: `bench-lanes-${LANES[0]}` },
          interactions.respondCliMs,
        ),
      );
      await interactions.endRunningSaga();

      // BENCH_QUICK=1 (profiling): the lane runs, interaction latency and CLI start-up only.
      if (!process.env.BENCH_QUICK) await baselineManyAndReplay();

      async function baselineManyAndReplay(): Promise<void> {
        progress(
          'naive sequential baseline: the same 8 tasks by hand (worktree, agent, check, commit, merge)',
        );
        const baselineMs = await runNaiveBaseline(writeBenchRepo(scenario('naive'), 'naive', dag), dag);
        figures.push(
          figure('naive_baseline_ms', 'total', baselineMs, 'ms', null, 'the same 8 tasks by a plain script'),
        );
        for (const lanes of [1, 4].filter((l) => implementationMs.has(l)))
          figures.push(
            figure(
              'implementation_ratio_to_naive_baseline',
              `${lanes} lane${lanes === 1 ? '' : 's'}`,
              implementationMs.get(lanes)! / baselineMs,
              'ratio',
              null,
              'implementation phase (tasks, integration, milestone check) / naive script',
            ),
          );

        progress(`bench-many: ${MANY_TASKS} instant tasks on 4 lanes`);
        const manyDag: Dag = flatDag(MANY_TASKS, 0);
        const manyBench = writeBenchRepo(scenario('many'), 'many', manyDag);
        const many = await runSaga(client, manyBench, 'bench-many', 4, 280_000);
        runs.push(many);
        dumpHistories(many, manyBench.agentLog);
        figures.push(leanParentFigure(many, `${MANY_TASKS} tasks`));
        const manyTimings = implementationTimings(many.histories.get(many.phases.implementation)!);
        figures.push(
          ...overheadFigures(
            'overhead_instant',
            `${MANY_TASKS} instant tasks on 4 lanes (2 cores shared)`,
            taskOverheads(manyTimings, manyDag.deps, 4, readAgentLog(manyBench.agentLog)),
            null,
          ).slice(0, 2),
        );

        const perTask = runs.flatMap((r) => r.tasks.map((id) => eventCount(r.histories.get(id)!)));
        figures.push(
          figure(
            'history_events_per_task',
            'median',
            quantile(perTask, 0.5),
            'events',
            60,
            `${perTask.length} task workflows`,
          ),
        );
        figures.push(
          figure(
            'history_events_per_task',
            'max',
            Math.max(...perTask),
            'events',
            60,
            `${perTask.length} task workflows`,
          ),
        );
        for (const [phase, id] of Object.entries(many.phases))
          figures.push(
            figure(
              'history_events',
              `${phase} workflow`,
              eventCount(many.histories.get(id)!),
              'events',
              HISTORY_COUNT_WARN,
              `${MANY_TASKS}-task saga (Temporal warns at ${HISTORY_COUNT_WARN})`,
            ),
          );
        const payload = Math.max(...runs.flatMap((r) => [...r.histories.values()].map(largestPayload)));
        figures.push(
          figure('largest_payload_bytes', 'max', payload, 'bytes', BLOB_SIZE_WARN, 'any event of any run'),
        );

        progress(`replaying the ${many.histories.size} histories of the ${MANY_TASKS}-task saga in one call`);
        const replay = await replayHistories(
          [...many.histories].map(([workflowId, history]) => ({ workflowId, history })),
        );
        for (const f of replay.failures) progress(`replay failed: ${f}`);
        progress(
          `replay: set-up ${Math.round(replay.setupMs)} ms; slowest: ${slowest(replay, 3).join('; ')}`,
        );
        const perHistory = replay.histories.map((h) => h.ms);
        const replayed = `${perHistory.length} histories of the ${MANY_TASKS}-task saga, one call, ${replay.bundle}`;
        figures.push(figure('replay_ms', 'total', replay.totalMs, 'ms', 1000, replayed));
        figures.push(
          figure('replay_ms', 'set-up', replay.setupMs, 'ms', null, 'replay worker and bundle load'),
        );
        figures.push(
          figure('replay_ms', 'p95 per history', quantile(perHistory, 0.95), 'ms', null, replayed),
        );
        const cpuNote =
          'CPU time of the bench process during the replay (the wall time swings with the machine)';
        figures.push(figure('replay_cpu_ms', 'user', replay.cpuMs.user, 'ms', null, cpuNote));
        figures.push(figure('replay_cpu_ms', 'system', replay.cpuMs.system, 'ms', null, cpuNote));
        const [largest] = [...replay.histories].sort((a, b) => b.ms - a.ms);
        figures.push(
          figure(
            'replay_ms',
            'max per history',
            largest?.ms ?? NaN,
            'ms',
            null,
            `${largest?.workflowId}, ${largest?.events} events`,
          ),
        );
        figures.push(
          figure(
            'replay_failures',
            'total',
            replay.failures.length,
            'histories',
            1,
            `${perHistory.length} histories`,
          ),
        );
      }

      progress('sandbox: the added cost per confined run');
      figures.push(...(await sandboxFigures()));

      progress('forge: API calls per watched PR, time to open a PR');
      figures.push(...(await forgeFigures()));

      const { overall } = await benchWorker.peak();
      if (rss4 !== null)
        figures.push(
          figure(
            'worker_peak_rss_mb',
            '4 lanes',
            rss4 / 2 ** 20,
            'MB',
            400,
            `${AGENT_MS} ms agents, 4 at a time`,
          ),
        );
      figures.push(figure('worker_peak_rss_mb', 'max', overall / 2 ** 20, 'MB', null, 'whole bench'));
    }
  } finally {
    await worker?.stop();
    await connection?.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
  const cores = `${os.cpus().length} cores`;
  figures.push(figure('machine_load_1min', 'start', loadAtStart, 'processes', null, cores));
  figures.push(figure('machine_load_1min', 'end', os.loadavg()[0]!, 'processes', null, cores));
  figures.push(figure('bench_wall_time_s', 'total', (Date.now() - benchStart) / 1000, 's', 300));
  for (const f of figures) process.stdout.write(`${figureLine(f)}\n`);
  process.stdout.write(`\n${table(figures)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`[bench] failed: ${String((error as Error).stack ?? error)}\n`);
    process.exit(1);
  },
);
