/**
 * `npm run bench:board` (node dist/bench/board.js): the saga board on the 1,000-task saga of
 * `npm run bench:server` (BENCH_MILESTONES × BENCH_TASKS timed-agent tasks of BENCH_AGENT_MS on BENCH_LANES
 * lanes; 20 × 50, 1 s, 4 lanes), measured while its implementation runs, with `bin/saga board` from the
 * build in its own process and headless Chromium (playwright-core) as the user's browser:
 *   - first load: navigation start → every lane (milestone) with its header and counts, and the cards of the
 *     lanes in view (as many as the viewport shows of each) rendered, and the frame that shows them painted
 *     (BENCH_LOADS cold loads, each in a new browser context: no cache, no other page watching), < 1 s. Since
 *     2026-12-06 the page builds a lane's cards only as it comes into view (lanes.js): before, the figure
 *     waited for all 1,000 cards, which the page no longer builds at load;
 *   - update latency: a task's state change → its card's `data-status` changed on an open page, over at least
 *     BENCH_CHANGES (100) changes, `running` and `passed` (at full lanes a task's `passed` and the next task's
 *     `running` come in the same workflow task, and reach the page in the same event), with one tab open and
 *     with BENCH_TABS (10) tabs of one browser open, p95 < 1 s with ten; every tab has scrolled through the
 *     whole saga first, so all 1,000 cards are built in each (the worst case, and the recorder sees them all);
 *   - Temporal calls of the board process per second with one page open and with BENCH_TABS (10) open, each
 *     for BENCH_RATE_WINDOW_S seconds at least: ten tabs must cost no more than one (one shared poller).
 * The ten tabs are pages of ONE browser context, as a user's tabs are: they share one event stream (the
 * SharedWorker of events-worker.js), so the browser's 6-connections-per-host limit does not bite.
 * BENCH_BOARD_FINISHED=1 also lets the saga finish (all tasks integrated, accepted: ~9 more minutes at the
 * issue's sizes) and times the first load of the completed saga. Progress goes to stderr, figures to stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { getStatus, waitForStatus } from '../src/client/saga-client';
import { dataConverterFromEnv } from '../src/codec/config';
import { phaseWorkflowId, sagaWorkflowId } from '../src/domain/contract/naming';
import type { SagaStatus } from '../src/domain/contract/state';
import { PROJECT_ROOT } from '../src/project-root';
import { startBenchServer, startWorker, type BenchWorker } from './bench-worker';
import type { RpcCounts } from './board-rpc-count';
import { figure, printFigures, quantile, runBench, type Figure } from './figures';
import { CHROMIUM, CHROMIUM_FLAGS } from './chromium';
import { BUILD_ALL, CHANGE_RECORDER, usableProbe } from './board-probes';
import { taskChangesVisibleAt } from './history';
import {
  accept,
  approve,
  awaitAcceptance,
  numberEnv,
  SCALE,
  startAndConfirm,
  writeScaleRepo,
} from './scale-saga';

const { milestones: MILESTONES, tasks: TASKS, agentMs: AGENT_MS, lanes: LANES } = SCALE;
/** Tasks passed or integrated before the board opens: the saga is well into its implementation. */
const WARM_TASKS = numberEnv('BENCH_WARM_TASKS', 50);
const LOADS = numberEnv('BENCH_LOADS', 5);
const CHANGES = numberEnv('BENCH_CHANGES', 100);
const WINDOW_S = numberEnv('BENCH_RATE_WINDOW_S', 20);
const TABS = numberEnv('BENCH_TABS', 10);
const FINISHED = process.env.BENCH_BOARD_FINISHED === '1';
const TOTAL = MILESTONES * TASKS;
const LOAD_TARGET_MS = 1_000;
const LATENCY_TARGET_MS = 1_000;
/** Ten tabs ≤ one: a window may hold one poll more than the other (~4 % of ~25 polls), hence 1.1. */
const RATE_RATIO_TARGET = 1.1;

const USABLE_PROBE = usableProbe(MILESTONES);
const SAGA_BIN = path.join(PROJECT_ROOT, 'bin', 'saga');
const RPC_COUNT = path.join(__dirname, 'board-rpc-count.js');
const TOKEN = 'bench-board-token-0123456789';
const VIEWPORT = { width: 1400, height: 1000 };

const progress = (line: string) =>
  process.stderr.write(`[bench:board ${Math.round(process.uptime())} s] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type History = temporal.api.history.v1.IHistory;
type Calls = Record<string, number>;

type Change = [ref: string, from: string, to: string, at: number];
const MEASURED = ['running', 'passed'];

interface Load {
  appMs: number;
  statusMs: number;
  cardsMs: number;
  usableMs: number;
  cardsBuilt: number;
}

interface BoardProcess {
  url: string;
  calls(): Promise<Calls>;
  stop(): Promise<void>;
}

/** `bin/saga board --port 0` from the build, its Temporal calls counted by the preloaded board-rpc-count. */
async function startBoard(env: NodeJS.ProcessEnv): Promise<BoardProcess> {
  const child: ChildProcess = spawn(process.execPath, ['-r', RPC_COUNT, SAGA_BIN, 'board', '--port', '0'], {
    env: { ...env, SAGA_BOARD_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stderr!.on('data', (chunk: Buffer) => progress(`board: ${chunk.toString().trimEnd()}`));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /Saga board: (http:\/\/\S+?)\/?\n/.exec(out);
      if (found) resolve(found[1]!);
    });
    void exited.then(() => reject(new Error(`bin/saga board exited: ${out}`)));
  });
  return {
    url,
    calls: () =>
      new Promise<Calls>((resolve, reject) => {
        child.once('message', (m: RpcCounts) => resolve(m.calls));
        child.send('rpc-counts', (error) => error && reject(error));
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

const diff = (after: Calls, before: Calls): Calls =>
  Object.fromEntries(
    Object.entries(after)
      .map(([method, n]) => [method, n - (before[method] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
const sum = (calls: Calls): number => Object.values(calls).reduce((a, b) => a + b, 0);
const callsLine = (calls: Calls, seconds: number): string =>
  Object.entries(calls)
    .map(([method, n]) => `${method} ${(n / seconds).toFixed(1)}/s`)
    .join(', ');

/** Opens the saga's page and waits for every card and the frame that shows them. */
async function openBoard(page: Page, pageUrl: string): Promise<Load> {
  await page.goto(pageUrl, { waitUntil: 'commit' });
  // Polled from here: waitForFunction evaluates its predicate with eval, which the board's CSP refuses.
  const deadline = Date.now() + 120_000;
  while (!(await page.evaluate('window.__usableMs !== undefined'))) {
    if (Date.now() > deadline) throw new Error(`${pageUrl}: not shown within 120 s.`);
    await sleep(50);
  }
  return (await page.evaluate(`({
    appMs: performance.getEntriesByName('saga-board:modules')[0]?.startTime,
    statusMs: performance.getEntriesByName('saga-board:first-status')[0]?.startTime,
    cardsMs: window.__cardsMs,
    usableMs: window.__usableMs,
    cardsBuilt: window.__cardsBuilt,
  })`)) as Load;
}

/** BENCH_LOADS cold loads: each in a new browser context (empty cache), nothing else watching the saga. */
async function coldLoads(browser: Browser, pageUrl: string, label: string): Promise<Load[]> {
  const loads: Load[] = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await browser.newContext({ viewport: VIEWPORT });
    await context.addInitScript({ content: USABLE_PROBE });
    try {
      const load = await openBoard(await context.newPage(), pageUrl);
      loads.push(load);
      progress(
        `${label} load ${i + 1}: modules loaded ${Math.round(load.appMs)} ms, ` +
          `first status event ${Math.round(load.statusMs)} ms, ` +
          `lanes and the ${load.cardsBuilt} cards in view ${Math.round(load.cardsMs)} ms, ` +
          `shown ${Math.round(load.usableMs)} ms`,
      );
    } finally {
      await context.close();
    }
    await sleep(1_000); // the board hears the page close and stops watching: the next load starts cold
  }
  return loads;
}

function loadFigures(loads: Load[], label: string): Figure[] {
  const usable = loads.map((l) => l.usableMs);
  const scenario = `${loads.length} cold loads of the ${TOTAL}-task saga (${label}) in headless Chromium`;
  const median = (part: keyof Load) =>
    quantile(
      loads.map((l) => l[part]),
      0.5,
    );
  const parts: [keyof Load, string, string][] = [
    ['appMs', 'modules', 'navigation start → page modules loaded'],
    [
      'statusMs',
      'status event',
      'navigation start → first status event (the server reads the saga on subscribe)',
    ],
    [
      'cardsMs',
      'cards',
      `navigation start → every lane and the cards in view in the DOM (before the frame that shows them)`,
    ],
  ];
  return [
    figure(
      'board_first_load_cards',
      `${label} median`,
      median('cardsBuilt'),
      'cards',
      null,
      `task cards built when the lanes in view were shown (of ${TOTAL})`,
    ),
    figure('board_first_load_ms', `${label} median`, quantile(usable, 0.5), 'ms', LOAD_TARGET_MS, scenario),
    figure('board_first_load_ms', `${label} max`, Math.max(...usable), 'ms', LOAD_TARGET_MS, scenario),
    ...parts.map(([part, stat, what]) =>
      figure('board_first_load_ms', `${label} ${stat} median`, median(part), 'ms', null, what),
    ),
  ];
}

async function implementationHistories(client: Client, name: string): Promise<History[]> {
  const id = phaseWorkflowId(name, 'implementation', 1);
  const runs: History[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${id}'` }))
    runs.push(await client.workflow.getHandle(id, run.runId).fetchHistory());
  return runs;
}

/**
 * Update latency of each recorded change: its card's DOM change − the moment it became visible (above).
 * It includes the wait for the watcher's next poll (up to its 500 ms pause after the previous read: the
 * floor's upper bound), the read itself (describe + the saga's and the implementation's status queries,
 * answered by the worker), the event's JSON sent to the page over SSE, parsed, and the page's re-render of
 * every card; not the frame's paint (≤ one frame more).
 */
async function latencies(client: Client, name: string, changes: Change[], label: string): Promise<number[]> {
  const status = await getStatus(client, name);
  const workflowOf = new Map(status.milestones.flatMap((m) => m.tasks.map((t) => [t.id, t.workflowId])));
  const visible = taskChangesVisibleAt(await implementationHistories(client, name));
  const out: Record<string, number[]> = { running: [], passed: [] };
  let unmatched = 0;
  for (const [ref, , to, at] of changes) {
    const id = workflowOf.get(ref);
    const since = id ? visible[to as 'running' | 'passed'].get(id) : undefined;
    if (since === undefined) unmatched++;
    else out[to]!.push(at - since);
  }
  if (unmatched) progress(`update latency: ${unmatched} changes not found in the implementation's history`);
  const all = [...out.running!, ...out.passed!];
  progress(
    `update latency (${label}): ${Object.entries(out)
      .map(([to, ms]) => `→ ${to} ${ms.length}, median ${Math.round(quantile(ms, 0.5))} ms`)
      .join('; ')}; min ${Math.round(Math.min(...all))} ms, max ${Math.round(Math.max(...all))} ms`,
  );
  return all;
}

function latencyFigures(values: number[], label: string, target: number | null): Figure[] {
  const scenario = `${values.length} task changes (running, passed) of the ${TOTAL}-task saga, ${label} open`;
  return [
    figure('board_update_latency_ms', `${label} p95`, quantile(values, 0.95), 'ms', target, scenario),
    figure('board_update_latency_ms', `${label} median`, quantile(values, 0.5), 'ms', null, scenario),
  ];
}

async function measure(root: string, figures: Figure[]): Promise<void> {
  progress(`starting the dev server and a worker process (temp folder ${root})`);
  const { server, env } = await startBenchServer(root, 'bench-board');
  const name = 'board-big';
  let worker: BenchWorker | undefined;
  let connection: Connection | undefined;
  let board: BoardProcess | undefined;
  let browser: Browser | undefined;
  let client: Client | undefined;
  let done = false;
  try {
    worker = await startWorker(env);
    connection = await Connection.connect({ address: server.address });
    client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFromEnv() });
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    progress(`${name}: ${MILESTONES} milestones × ${TASKS} tasks of ${AGENT_MS} ms on ${LANES} lanes`);
    await startAndConfirm(client, writeScaleRepo(dir, name, MILESTONES, TASKS, AGENT_MS), name, LANES);
    await approve(client, name);
    const finishedTasks = (s: SagaStatus) =>
      s.milestones.flatMap((m) => m.tasks).filter((t) => t.status === 'passed' || t.status === 'integrated')
        .length;
    const warm = await waitForStatus(
      client,
      name,
      (s) => s.phase === 'implementation' && finishedTasks(s) >= WARM_TASKS,
      { timeoutMs: 600_000, pollMs: 2_000 },
    );
    progress(`${name}: implementation running, ${finishedTasks(warm)} of ${TOTAL} tasks done`);

    board = await startBoard(env);
    const pageUrl = `${board.url}/?token=${TOKEN}#/saga/${name}`;
    const view = await (
      await fetch(`${board.url}/api/sagas/${name}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    figures.push(
      figure(
        'board_status_event_kb',
        'running',
        Buffer.byteLength(view) / 1024,
        'KB',
        null,
        `the saga's whole view (GET /api/sagas/${name}; the first status event), ${TOTAL} tasks`,
      ),
    );
    if (!existsSync(CHROMIUM))
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: apt-get install chromium, or set SAGA_CHROMIUM.`,
      );
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });

    // 1. First load, mid-implementation.
    figures.push(...loadFigures(await coldLoads(browser, pageUrl, 'running'), 'running'));

    // 2 and 3. One page open: its cards' changes, and the board's Temporal calls meanwhile.
    const first = await browser.newContext({ viewport: VIEWPORT });
    await first.addInitScript({ content: USABLE_PROBE });
    const watched = await first.newPage();
    await watched.addInitScript({ content: CHANGE_RECORDER });
    await openBoard(watched, pageUrl);
    progress(`one page open: ${String(await watched.evaluate(BUILD_ALL))} cards built (scrolled through)`);
    const measured = (from: number) =>
      `window.__changes.filter((c) => c[3] >= ${from} && ${JSON.stringify(MEASURED)}.includes(c[2])).length`;
    const oneFrom = Date.now();
    const oneBefore = await board.calls();
    progress(`one page open: counting Temporal calls, waiting for ${CHANGES} task changes`);
    while (
      Date.now() - oneFrom < WINDOW_S * 1000 ||
      ((await watched.evaluate(measured(oneFrom))) as number) < CHANGES
    ) {
      if (Date.now() - oneFrom > 600_000)
        throw new Error(`Fewer than ${CHANGES} task changes in 10 minutes.`);
      await sleep(1_000);
    }
    const oneCalls = diff(await board.calls(), oneBefore);
    const oneTo = Date.now();

    progress(`opening ${TABS - 1} more tabs in the same browser context (one shared event stream)`);
    const tabs: Page[] = [];
    for (let i = 1; i < TABS; i++) {
      // A tab of the same profile, as a user opens one: before the shared stream, a 7th such tab waited for
      // one of the browser's 6 connections per host.
      const tab = await first.newPage();
      tabs.push(tab);
      await openBoard(tab, pageUrl);
      await tab.evaluate(BUILD_ALL);
    }
    const visible = await Promise.all([watched, ...tabs].map((t) => t.evaluate('document.visibilityState')));
    progress(
      `${TABS} tabs open, all cards built in each; visible: ${visible.filter((v) => v === 'visible').length}`,
    );
    const tenFrom = Date.now();
    const tenBefore = await board.calls();
    await sleep(WINDOW_S * 1000);
    const tenCalls = diff(await board.calls(), tenBefore);
    const tenTo = Date.now();
    const changes = (await watched.evaluate('window.__changes')) as Change[];
    for (const tab of tabs) await tab.close();
    await first.close();

    const oneSeconds = (oneTo - oneFrom) / 1000;
    const tenSeconds = (tenTo - tenFrom) / 1000;
    const oneRate = sum(oneCalls) / oneSeconds;
    const tenRate = sum(tenCalls) / tenSeconds;
    progress(`1 page, ${oneSeconds.toFixed(1)} s: ${callsLine(oneCalls, oneSeconds)}`);
    progress(`${TABS} pages, ${tenSeconds.toFixed(1)} s: ${callsLine(tenCalls, tenSeconds)}`);
    const counted = 'gRPC calls of the bin/saga board process (describe, query, list)';
    figures.push(
      figure(
        'board_temporal_calls_per_s',
        '1 tab',
        oneRate,
        'calls/s',
        null,
        `${counted}, ${oneSeconds.toFixed(0)} s`,
      ),
      figure(
        'board_temporal_calls_per_s',
        `${TABS} tabs`,
        tenRate,
        'calls/s',
        null,
        `${counted}, ${tenSeconds.toFixed(0)} s`,
      ),
      figure(
        'board_temporal_calls_ratio',
        `${TABS} tabs / 1 tab`,
        tenRate / oneRate,
        'ratio',
        RATE_RATIO_TARGET,
        `${TABS} tabs cost Temporal no more than one (one shared poller): ≈ 1`,
      ),
    );

    const inWindow = (from: number, to: number) =>
      changes.filter(([, , status, at]) => MEASURED.includes(status) && at >= from && at <= to);
    figures.push(
      ...latencyFigures(
        await latencies(client, name, inWindow(oneFrom, oneTo), '1 tab'),
        '1 tab',
        LATENCY_TARGET_MS,
      ),
      ...latencyFigures(
        await latencies(client, name, inWindow(tenFrom, tenTo), `${TABS} tabs`),
        `${TABS} tabs`,
        LATENCY_TARGET_MS,
      ),
    );

    if (FINISHED) {
      progress(`${name}: letting the saga finish (all ${TOTAL} tasks), then accepting it`);
      await awaitAcceptance(client, name, 6 * 3_600_000);
      await accept(client, name);
      figures.push(...loadFigures(await coldLoads(browser, pageUrl, 'complete'), 'complete'));
      done = true;
    }
  } finally {
    await browser?.close().catch(() => undefined);
    await board?.stop();
    if (!done)
      await client?.workflow
        .getHandle(sagaWorkflowId(name))
        .terminate('bench:board is done')
        .catch(() => undefined);
    await worker?.stop();
    await connection?.close();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  // Other work on the machine inflates every timing figure: the load is printed with them.
  const loadAtStart = os.loadavg()[0]!;
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-bench-board-'));
  const figures: Figure[] = [];
  try {
    await measure(root, figures);
  } finally {
    if (!process.env.BENCH_KEEP) rmSync(root, { recursive: true, force: true });
  }
  printFigures(figures, { at: started, load: loadAtStart });
}

runBench('bench:board', main);
