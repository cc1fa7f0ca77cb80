/**
 * The saga worker of a bench in its own process (bench/worker-process.ts), so its memory is its own; the
 * bench asks it for its peak memory and stops it over IPC.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startDevServerOnFreePorts, type DevServer } from '../src/worker/dev-server';
import type { WorkerMessage } from './worker-process';

export interface BenchWorker {
  /** The worker process's pid: also its process group's id when it was started `detached`. */
  pid: number;
  /** Peak RSS since the last resetPeak, over the whole run, and the worker's own CPU-seconds so far. */
  peak(): Promise<{ rss: number; overall: number; cpuSeconds: number }>;
  resetPeak(): void;
  stop(): Promise<void>;
}

/** `detached`: the worker leads a process group of its own, which a bench can kill as a whole. */
export async function startWorker(
  env: NodeJS.ProcessEnv,
  options: { detached?: boolean } = {},
): Promise<BenchWorker> {
  const child: ChildProcess = fork(path.join(__dirname, 'worker-process.js'), [], {
    env,
    stdio: ['ignore', process.stderr, 'inherit', 'ipc'], // SDK logs must not mix with the figures
    detached: options.detached ?? false,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = () =>
    new Promise<WorkerMessage>((resolve, reject) => {
      child.once('message', (m: WorkerMessage) =>
        m.type === 'error' ? reject(new Error(m.message)) : resolve(m),
      );
      void exited.then(() => reject(new Error('The bench worker exited.')));
    });
  await next();
  return {
    pid: child.pid!,
    async peak() {
      const reply = next();
      child.send('peak');
      const m = await reply;
      if (m.type !== 'peak') throw new Error(`Unexpected worker message ${m.type}`);
      return { rss: m.rss, overall: m.overall, cpuSeconds: m.cpuSeconds };
    },
    resetPeak: () => child.send('reset-peak'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send('stop');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * A bench's own dev server (its database and log under `root`) and the saga environment its worker and CLI
 * runs share (`label` names the host and queue); the environment is set in this process too, where
 * prepareSaga reads it. `env` is what a child process (worker, bin/saga) needs.
 */
export async function startBenchServer(
  root: string,
  label: string,
): Promise<{ server: DevServer; sagaEnv: Record<string, string>; env: NodeJS.ProcessEnv }> {
  const server = await startDevServerOnFreePorts({
    dbFile: path.join(root, 'temporal.db'),
    headless: true,
    logFile: path.join(root, 'server.log'),
    startTimeoutMs: 120_000,
  });
  const sagaEnv = {
    SAGA_HOME: path.join(root, 'home'),
    SAGA_HOST_ID: `${label}-${process.pid}`,
    SAGA_TASK_QUEUE: `saga-${label}-${process.pid}`,
  };
  Object.assign(process.env, sagaEnv);
  return { server, sagaEnv, env: { ...process.env, ...sagaEnv, TEMPORAL_ADDRESS: server.address } };
}
