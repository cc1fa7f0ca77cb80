/**
 * A worker SIGKILLed with agents running (`npm run bench:server`): BENCH_KILL_AGENTS (8) timed-agent tasks run at
 * once, each BENCH_KILL_AGENT_MS (60 s) long, on a worker of its own (its own workflow and host queues, so the
 * bench's main worker takes none of its work). A saga runs at most 4 lanes (FLAG_VOCABULARY.maxLanes, a hard
 * cap of `--parallel=N`), so 8 agents are two sagas of 4 independent tasks on 4 lanes each. Once every agent runs and has
 * named its session, the worker's process group gets SIGKILL; the agents run in process groups of their own
 * (as the product spawns them) and outlive it, as they do when a real worker dies. A new worker starts at
 * once; the figure is the time from its start until a new agent process runs for every task: each task's
 * attempt activity is retried at once (the new worker fails the dead one's attempts from the host's activity
 * ledger) rather than after its heartbeat timeout (saga.config.yaml `heartbeat_timeout`, here
 * BENCH_KILL_HEARTBEAT, default the product's 30s), the dead try's agent ended and its session resumed (the timed agent names sessions as Claude Code does, under a profile named `claude`).
 * BENCH_KILL_AGENTS=0 skips it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { AGENT_RUN_FILE } from '../src/domain/config/agent-presets';
import { DEFAULT_HEARTBEAT_TIMEOUT } from '../src/domain/config/config';
import { FLAG_VOCABULARY } from '../src/domain/request/flags';
import { sagaWorkflowId } from '../src/domain/contract/naming';
import { startWorker, type BenchWorker } from './bench-worker';
import { figure, type Figure } from './figures';
import { approve, numberEnv, startAndConfirm, withOwnQueues, withSagaQueues } from './scale-saga';
import { flatDag, writeBenchRepo } from './scenario';
import type { AgentStart } from './timed-agent';

const AGENTS = numberEnv('BENCH_KILL_AGENTS', 8);
const AGENT_MS = numberEnv('BENCH_KILL_AGENT_MS', 60_000);
const HEARTBEAT = process.env.BENCH_KILL_HEARTBEAT ?? DEFAULT_HEARTBEAT_TIMEOUT;
const TARGET_S = 10;
/** The most lanes a saga runs (`--parallel=N` is clamped to it). */
const MAX_LANES = FLAG_VOCABULARY.maxLanes;

const progress = (line: string) => process.stderr.write(`[worker-kill] ${line}\n`);

const readStarts = (file: string): AgentStart[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AgentStart)
    : [];

/** The first start of each task at or after `since` (ms since the epoch). */
export function firstStarts(starts: AgentStart[], since: number): Map<string, AgentStart> {
  const first = new Map<string, AgentStart>();
  for (const s of starts)
    if (s.start >= since && (!first.has(s.task) || s.start < first.get(s.task)!.start)) first.set(s.task, s);
  return first;
}

/** Agent runs of the saga whose agent.json names a session (what a retry resumes when no heartbeat had it). */
function sessionsRecorded(sagaDir: string): number {
  const runs = path.join(sagaDir, 'runs');
  if (!existsSync(runs)) return 0;
  return readdirSync(runs).filter((run) => {
    try {
      const record = JSON.parse(readFileSync(path.join(runs, run, AGENT_RUN_FILE), 'utf8')) as {
        sessionId?: string | null;
      };
      return Boolean(record.sessionId);
    } catch {
      return false;
    }
  }).length;
}

/** Whether the process runs (a zombie does not: an init that never reaps keeps them). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function waitUntil(what: string, timeoutMs: number, done: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`worker-kill: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One saga of the scenario: its tasks, where its agents log their starts, its run folders. */
interface KillSaga {
  name: string;
  repo: ReturnType<typeof writeBenchRepo>;
  tasks: string[];
  startsFile: string;
  sagaDir: string;
}

/** Every saga's agent starts, keyed `saga task` so that the sagas' equal task refs stay apart. */
const allStarts = (sagas: KillSaga[]): AgentStart[] =>
  sagas.flatMap((saga) => readStarts(saga.startsFile).map((s) => ({ ...s, task: `${saga.name} ${s.task}` })));

/**
 * The worker-kill figures of one target. `env` is the bench worker's environment (TEMPORAL_ADDRESS,
 * SAGA_HOME, SAGA_HOST_ID, SAGA_TASK_QUEUE): this scenario's worker gets queues of its own from it.
 */
export async function workerKillFigures(
  label: string,
  client: Client,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<Figure[]> {
  if (AGENTS <= 0) return [];
  const killEnv = withOwnQueues(env, 'kill');
  const sagas: KillSaga[] = [];
  for (let i = 0; i * MAX_LANES < AGENTS; i++) {
    const name = `scale-kill-${i + 1}`;
    const sagaDir = path.join(dir, name);
    mkdirSync(sagaDir, { recursive: true });
    const startsFile = path.join(sagaDir, 'agent-starts.jsonl');
    const dag = flatDag(Math.min(MAX_LANES, AGENTS - i * MAX_LANES), AGENT_MS);
    const repo = writeBenchRepo(sagaDir, name, dag, {
      agent: 'claude',
      profile: { output: 'claude' },
      env: { BENCH_AGENT_STARTS: startsFile },
      settings: { heartbeat_timeout: HEARTBEAT },
    });
    const tasks = Object.keys(dag.durations).map((t) => `${name} ${t}`);
    sagas.push({ name, repo, tasks, startsFile, sagaDir: path.join(env.SAGA_HOME!, name) });
  }
  const tasks = sagas.flatMap((saga) => saga.tasks);
  const workers: BenchWorker[] = [];
  const started: string[] = [];
  try {
    progress(
      `${label}: ${AGENTS} tasks of ${AGENT_MS} ms (${sagas.length} sagas on ${MAX_LANES} lanes), ` +
        `heartbeat_timeout ${HEARTBEAT}`,
    );
    const first = await startWorker(killEnv, { detached: true });
    workers.push(first);
    await withSagaQueues(killEnv, async () => {
      for (const saga of sagas) {
        started.push(saga.name);
        await startAndConfirm(client, saga.repo, saga.name, MAX_LANES);
      }
    });
    await Promise.all(sagas.map((saga) => approve(client, saga.name)));
    await waitUntil(
      `${AGENTS} agents running`,
      300_000,
      () => allStarts(sagas).filter((s) => running(s.pid)).length >= AGENTS,
    );
    await waitUntil(`${AGENTS} sessions recorded`, 30_000, () =>
      sagas.every((saga) => sessionsRecorded(saga.sagaDir) >= saga.tasks.length),
    );
    const before = allStarts(sagas).filter((s) => running(s.pid));

    const killedAt = Date.now();
    process.kill(-first.pid, 'SIGKILL');
    await waitUntil('the killed worker gone', 10_000, () => !running(first.pid));
    progress(
      `${label}: worker ${first.pid} and its process group SIGKILLed with ${before.length} agents running`,
    );
    const newStart = Date.now();
    workers.push(await startWorker(killEnv, { detached: true }));
    const readyAt = Date.now();
    await waitUntil(`a new agent for each of the ${AGENTS} tasks`, 600_000, () => {
      const again = firstStarts(allStarts(sagas), killedAt);
      return tasks.every((t) => again.has(t));
    });
    const again = firstStarts(allStarts(sagas), killedAt);
    const times = tasks.map((t) => again.get(t)!.start);
    const allAt = Math.max(...times);
    const resumed = tasks.filter((t) => {
      const old = before.find((s) => s.task === t);
      return old && again.get(t)!.resumed === old.session;
    }).length;
    const leftover = before.filter((s) => running(s.pid)).length;
    progress(
      `${label}: new worker ready in ${readyAt - newStart} ms; all ${AGENTS} running again ` +
        `${Math.round(allAt - newStart)} ms after its start (first ${Math.round(Math.min(...times) - newStart)} ms, ` +
        `${Math.round(allAt - killedAt)} ms after the kill); ${resumed} sessions resumed; ${leftover} old agents still running`,
    );
    const scenario =
      `${AGENTS} tasks at once (${sagas.length} sagas x ${MAX_LANES} lanes), ${AGENT_MS / 1000}-s agents; ` +
      `worker process group SIGKILLed, new worker started; heartbeat_timeout ${HEARTBEAT} (saga.config.yaml); ` +
      `${resumed}/${AGENTS} sessions resumed`;
    const s = (ms: number) => ms / 1000;
    return [
      figure(
        'worker_kill_resume_s',
        `${label}, all ${AGENTS} running again`,
        s(allAt - newStart),
        's',
        TARGET_S,
        scenario,
      ),
      figure(
        'worker_kill_resume_s',
        `${label}, first running again`,
        s(Math.min(...times) - newStart),
        's',
        null,
        'new worker started → the first task’s new agent started',
      ),
      figure(
        'worker_kill_resume_s',
        `${label}, from the kill`,
        s(allAt - killedAt),
        's',
        null,
        `SIGKILL → all ${AGENTS} running again`,
      ),
      figure(
        'worker_kill_resume_s',
        `${label}, new worker ready`,
        s(readyAt - newStart),
        's',
        null,
        'process start → polling',
      ),
      figure(
        'worker_kill_leftover_agents',
        label,
        leftover,
        'agents',
        1,
        'agents of the killed worker still running once every task had a new one',
      ),
    ];
  } finally {
    for (const name of started)
      await client.workflow
        .getHandle(sagaWorkflowId(name))
        .terminate('bench: worker-kill measured')
        .catch(() => undefined);
    for (const w of workers) await w.stop();
    // Agents are process groups of their own: end any that a cancellation has not ended yet.
    for (const agent of allStarts(sagas))
      if (running(agent.pid))
        try {
          process.kill(-agent.pid, 'SIGKILL');
        } catch {
          // already gone
        }
  }
}
