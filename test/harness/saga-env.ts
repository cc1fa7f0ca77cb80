/**
 * Per-test-file environment: a client and in-process saga workers connected to the run's real Temporal
 * server, with their own workflow task queue, host queue and saga home, so test files never share work.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker } from '@temporalio/worker';
import { hostTaskQueue, sagaWorkflowId } from '../../src/domain/contract/naming';
import type { SagaStatus } from '../../src/domain/contract/state';
import { queryLiveStatus } from '../../src/status/live-status';
import { createSagaWorkers } from '../../src/worker/worker';
import { waitForStatus as waitForSagaStatus } from '../../src/client/saga-client';
import { testServer, WORKFLOW_BUNDLE } from './server';

let runtimeInstalled = false;
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* already installed in this process */
  }
}

export interface SagaTestEnv {
  client: Client;
  address: string;
  sagaHome: string;
  hostId: string;
  taskQueue: string;
  /** Env for spawning bin/saga (or worker processes) against the same server, queue and home. */
  cliEnv: NodeJS.ProcessEnv;
  /** `workflowBundlePath`: other workflow code than the project's (default: the built bundle). */
  startWorkers(opts?: {
    hostId?: string;
    workflowBundlePath?: string;
    hostActivitySlots?: number;
  }): Promise<RunningWorkers>;
  tmp(prefix: string): string;
  close(): Promise<void>;
}

export interface RunningWorkers {
  workers: Worker[];
  stop(): Promise<void>;
}

export async function createSagaTestEnv(label: string): Promise<SagaTestEnv> {
  quietRuntime();
  const server = testServer();
  const root = mkdtempSync(path.join(os.tmpdir(), `saga-${label}-`));
  const sagaHome = path.join(root, 'home');
  const hostId = `${label}-${path.basename(root).slice(-6)}`.toLowerCase();
  const taskQueue = `saga-test-${hostId}`;
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const running: RunningWorkers[] = [];
  const nativeConnections: NativeConnection[] = [];

  return {
    client,
    address: server.address,
    sagaHome,
    hostId,
    taskQueue,
    cliEnv: {
      ...process.env,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: server.namespace,
      SAGA_HOME: sagaHome,
      SAGA_HOST_ID: hostId,
      SAGA_TASK_QUEUE: taskQueue,
    },
    async startWorkers(opts = {}) {
      const native = await NativeConnection.connect({ address: server.address });
      nativeConnections.push(native);
      const workers = await createSagaWorkers({
        connection: native,
        namespace: server.namespace,
        sagaHome,
        hostId: opts.hostId ?? hostId,
        taskQueue,
        workflowBundlePath: opts.workflowBundlePath ?? WORKFLOW_BUNDLE,
        ...(opts.hostActivitySlots ? { hostActivitySlots: opts.hostActivitySlots } : {}),
      });
      const runs = workers.map((w) => w.run());
      const handle: RunningWorkers = {
        workers,
        async stop() {
          for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
          await Promise.allSettled(runs);
        },
      };
      running.push(handle);
      return handle;
    },
    tmp(prefix: string) {
      return mkdtempSync(path.join(root, `${prefix}-`));
    },
    async close() {
      for (const r of running) await r.stop();
      for (const n of nativeConnections) await n.close();
      await connection.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export const hostQueueOf = (env: SagaTestEnv): string => hostTaskQueue(env.hostId);

export async function sagaStatus(env: SagaTestEnv, name: string): Promise<SagaStatus> {
  return queryLiveStatus(env.client, sagaWorkflowId(name));
}

/** Polls the saga's status until `predicate` holds (or fails with the last status seen). */
export const waitForStatus = (
  env: SagaTestEnv,
  name: string,
  predicate: (s: SagaStatus) => boolean,
  timeoutMs = 90_000,
): Promise<SagaStatus> => waitForSagaStatus(env.client, name, predicate, { timeoutMs });

export const waitForPending = (env: SagaTestEnv, name: string, id: string | RegExp, timeoutMs?: number) =>
  waitForStatus(
    env,
    name,
    (s) => s.pending.some((p) => (typeof id === 'string' ? p.id === id : id.test(p.id))),
    timeoutMs,
  );

/**
 * Points in-process saga starts (prepareSaga reads SAGA_HOME, SAGA_HOST_ID, SAGA_TASK_QUEUE) and the
 * in-process workers' agents (SAGA_DEMO_LOG) at this test environment.
 */
export function useEnvInProcess(env: SagaTestEnv, demoLog?: string): void {
  Object.assign(process.env, {
    SAGA_HOME: env.sagaHome,
    SAGA_HOST_ID: env.hostId,
    SAGA_TASK_QUEUE: env.taskQueue,
    ...(demoLog ? { SAGA_DEMO_LOG: demoLog } : {}),
  });
}

export type InProcessSagaEnv = SagaTestEnv & { demoLog: string };

/**
 * A test environment whose sagas start in this process (useEnvInProcess), with its workers running and
 * the demo agent logging each run to `demoLog`. `close()` also forgets the log.
 */
export async function createInProcessSagaEnv(label: string): Promise<InProcessSagaEnv> {
  const env = await createSagaTestEnv(label);
  const demoLog = path.join(env.tmp('log'), 'demo.jsonl');
  useEnvInProcess(env, demoLog);
  await env.startWorkers();
  return {
    ...env,
    demoLog,
    close: async () => {
      delete process.env.SAGA_DEMO_LOG;
      await env.close();
    },
  };
}

export interface DemoInvocation {
  role: string;
  stage: string;
  taskId: string;
  attempt: number;
  pid: number;
}

/** The demo agent's invocation log (one JSON line per run, written when SAGA_DEMO_LOG is set). */
export function demoInvocations(file: string): DemoInvocation[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as DemoInvocation)
    : [];
}
