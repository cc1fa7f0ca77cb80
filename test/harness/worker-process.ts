/**
 * `bin/saga worker` as a real child process (what a second machine would run), for the multi-worker and
 * shutdown tests: spawned against the test server, ready once its host queue has its poller, stoppable
 * with a signal.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { hostTaskQueue } from '../../src/domain/contract/naming';
import type { SagaTestEnv } from './saga-env';
import { ARTIFACTS } from './server';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI_ENTRY = path.join(ROOT, 'dist', 'src', 'client', 'main.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * bin/saga runs dist/: rebuild when a source is newer. Test files run in parallel, so one builds (the one
 * that creates the lock folder) and the others wait for its marker.
 */
export async function ensureBuilt(): Promise<void> {
  const fresh = () =>
    existsSync(CLI_ENTRY) && statSync(CLI_ENTRY).mtimeMs >= newestSource(path.join(ROOT, 'src'));
  if (fresh()) return;
  const lock = path.join(ARTIFACTS, 'build.lock');
  const done = path.join(ARTIFACTS, 'build.done');
  try {
    mkdirSync(lock);
  } catch {
    const deadline = Date.now() + 120_000;
    while (!existsSync(done) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    return;
  }
  // Type errors do not stop tsc from emitting; the typecheck step reports them.
  spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  writeFileSync(done, '');
  if (!existsSync(CLI_ENTRY)) throw new Error(`npm run build did not produce ${CLI_ENTRY}.`);
}

export interface WorkerProcess {
  hostId: string;
  pid: number;
  /** The SDK's default worker identity (`pid@hostname`), as recorded in workflow history. */
  identityPrefix: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` and waits for the process to exit (SIGKILL after `timeoutMs`). */
  stop(
    signal?: NodeJS.Signals,
    timeoutMs?: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

/** Spawns `saga worker --host-id <hostId> [extraArgs]` and resolves once it polls its host queue. */
export async function spawnWorker(
  env: SagaTestEnv,
  hostId: string,
  extraEnv: NodeJS.ProcessEnv = {},
  extraArgs: string[] = [],
): Promise<WorkerProcess> {
  const argv = [path.join(ROOT, 'bin', 'saga'), 'worker', '--host-id', hostId, ...extraArgs];
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...env.cliEnv, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  const pid = child.pid!;
  const identityPrefix = `${pid}@`;

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gone) throw new Error(`saga worker --host-id ${hostId} exited before polling:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`saga worker --host-id ${hostId} did not poll its queue within 60 s:\n${output}`);
    }
    const { pollers } = await env.client.workflowService.describeTaskQueue({
      namespace: env.client.options.namespace,
      taskQueue: {
        name: hostTaskQueue(hostId),
        kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL,
      },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    });
    if (pollers?.some((p) => p.identity?.startsWith(identityPrefix))) break;
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    hostId,
    pid,
    identityPrefix,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 30_000) {
      if (!gone) child.kill(signal);
      const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(killer);
      return result;
    },
  };
}

/** Kills worker processes a failed test left behind. */
export async function killStrayWorkers(): Promise<void> {
  const waits = [...running].map((child) => new Promise((r) => child.once('exit', r)));
  for (const child of running) child.kill('SIGKILL');
  await Promise.all(waits);
}
