/**
 * A saga worker: workflow tasks from the shared `saga` queue (any machine may run workflow code), and the
 * host-bound activities from this host's own queue (only the machine holding the repo touches it).
 */
import {
  DefaultLogger,
  makeTelemetryFilterString,
  NativeConnection,
  Runtime,
  Worker,
  type LogLevel,
  type ActivityInterceptorsFactory,
  type LogMetadata,
  type State,
  type WorkerDeploymentOptions,
} from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createActivities } from '../activities';
import { dataConverterFromEnv } from '../codec/config';
import { hostTaskQueue, projectorTaskQueue } from '../domain/contract/naming';
import { activityLedger, activityLedgerDir, failOrphanedActivities } from './orphaned-activities';
import { defaultHostId, hostActivitySlots, shutdownGraceMs, workflowTaskQueue } from './host-settings';
import { prebuiltWorkflowBundle, workflowCode } from './workflow-bundle';

export interface SagaWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  sagaHome: string;
  hostId?: string;
  /** Prebuilt workflow bundle; default: the one `npm run build` wrote, else bundled from source at start. */
  workflowBundlePath?: string;
  /** Serve only host activities, no workflows (e.g. a second checkout machine). */
  activitiesOnly?: boolean;
  taskQueue?: string;
  /**
   * Worker Versioning (compose, Cloud): these workers serve build `buildId` of deployment `name`, and every
   * saga stays pinned to the build that started it, so an upgrade never replays old sagas on new code.
   */
  deployment?: { name: string; buildId: string };
  /** Host activities at once (agents, checks, git steps); default SAGA_HOST_SLOTS, else 16. */
  hostActivitySlots?: number;
  /** Default: the payload codec the environment configures (SAGA_CODEC_KEY...), else none. */
  dataConverter?: DataConverter;
}

/** Every workflow these workers start stays on their build (Temporal's PINNED versioning behavior). */
const pinnedTo = (deployment: { name: string; buildId: string }): WorkerDeploymentOptions => ({
  version: { deploymentName: deployment.name, buildId: deployment.buildId },
  useWorkerVersioning: true,
  defaultVersioningBehavior: 'PINNED',
});

export { defaultHostId, defaultSagaHome, shutdownGraceMs, workflowTaskQueue } from './host-settings';

/**
 * Warnings that are the design, not a fault: the shared workflow worker has no activities and the host
 * worker has no workflows, and the SDK says so at every start.
 */
const EXPECTED_WARNINGS = [/^No activities registered, not polling/, /^No workflows registered, not polling/];

class WorkerLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (level === 'WARN' && EXPECTED_WARNINGS.some((w) => w.test(message))) return;
    super.log(level, message, meta);
  }
}

/**
 * The SDK's Core logs at WARN, but for its note that query tasks (a status read racing a run that just
 * continued as new) were left when it evicted the run: the Core drops them as stale, the reader asks again.
 */
const coreLogFilter = (level: LogLevel): string =>
  makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) +
  (level === 'WARN' || level === 'ERROR'
    ? ',temporalio_sdk_core::worker::workflow::workflow_stream=ERROR'
    : '');

let runtimeReady = false;
/** Worker logs at SAGA_LOG_LEVEL (default WARN): the CLI's own output stays readable. */
export function installRuntime(): void {
  if (runtimeReady) return;
  runtimeReady = true;
  const level = (process.env.SAGA_LOG_LEVEL?.toUpperCase() ?? 'WARN') as LogLevel;
  try {
    Runtime.install({
      logger: new WorkerLogger(level),
      telemetryOptions: { logging: { filter: coreLogFilter(level) } },
    });
  } catch {
    // Already installed by the embedding program.
  }
}

/** Running sagas on this host whose PROGRESS.md is kept current. */
const PROJECTOR_SLOTS = 1_000;

export async function createSagaWorkers(options: SagaWorkerOptions): Promise<Worker[]> {
  installRuntime();
  const hostId = options.hostId ?? defaultHostId();
  const workflowSource = workflowCode(options.workflowBundlePath ?? prebuiltWorkflowBundle());
  const common = {
    connection: options.connection,
    namespace: options.namespace,
    // The codec runs in the worker's main thread, outside the workflow sandbox: the bundle needs nothing.
    dataConverter: options.dataConverter ?? dataConverterFromEnv(),
    ...(options.deployment ? { workerDeploymentOptions: pinnedTo(options.deployment) } : {}),
    // On SIGTERM/SIGINT (the runtime's shutdownSignals) quick activities get this long to finish; then
    // running ones are cancelled: agents and checks kill their process trees and report the cancellation.
    shutdownGraceTime: shutdownGraceMs(),
    // Backstop for an activity that ignores cancellation: exit anyway, before `docker stop` (1m) kills us.
    shutdownForceTime: shutdownGraceMs() + 35_000,
  } as const;
  const workers: Worker[] = [];
  if (!options.activitiesOnly) {
    workers.push(
      await Worker.create({
        ...common,
        taskQueue: options.taskQueue ?? workflowTaskQueue(),
        ...workflowSource,
        // Replaying a long saga from history is the resume path: keep enough cached to avoid it when possible.
        maxCachedWorkflows: 200,
      }),
    );
  }
  const ledger = activityLedgerDir(options.sagaHome, hostId);
  const hostStopping = new AbortController();
  const activities = createActivities({ sagaHome: options.sagaHome, hostStopping: hostStopping.signal });
  const hostActivities = {
    ...common,
    interceptors: { activity: [activityLedger(ledger)] as ActivityInterceptorsFactory[] },
    // Heartbeats reach the server at least every 2 s, so a cancellation (saga cancel, a timeout) reaches a
    // running agent promptly; heartbeats add no history events.
    maxHeartbeatThrottleInterval: '2s',
  } as const;
  const hostWorker = await Worker.create({
    ...hostActivities,
    taskQueue: hostTaskQueue(hostId),
    activities,
    maxConcurrentActivityTaskExecutions: options.hostActivitySlots ?? hostActivitySlots(),
  });
  // One projector per running saga, asleep but for a status read a second: slots enough for every saga.
  const projectorWorker = await Worker.create({
    ...hostActivities,
    taskQueue: projectorTaskQueue(hostTaskQueue(hostId)),
    activities: { projectProgress: activities.projectProgress },
    maxConcurrentActivityTaskExecutions: PROJECTOR_SLOTS,
  });
  // What a killed worker of this host was running is retried now, not after its heartbeat timeout.
  await failOrphanedActivities(hostWorker.client!, ledger).catch(() => 0);
  workers.push(hostWorker, projectorWorker);
  abortWhenStopping(workers, hostStopping);
  return workers;
}

/** How often a host's workers are checked for a shutdown begun (the SDK's signal handling or `shutdown()`). */
const STATE_CHECK_MS = 250;
const STOPPING_STATES: ReadonlySet<State> = new Set(['STOPPING', 'DRAINING', 'DRAINED', 'STOPPED', 'FAILED']);

/** Aborts `controller` once one of `workers` starts to stop: the SDK announces that to no one. */
function abortWhenStopping(workers: Worker[], controller: AbortController): void {
  const timer = setInterval(() => {
    if (!workers.some((w) => STOPPING_STATES.has(w.getState()))) return;
    controller.abort();
    clearInterval(timer);
  }, STATE_CHECK_MS);
  timer.unref();
}

/** Runs workers until shut down (SIGINT/SIGTERM are handled by the SDK runtime: activities are cancelled and drained). */
export async function runSagaWorkers(options: SagaWorkerOptions): Promise<void> {
  const workers = await createSagaWorkers(options);
  await Promise.all(workers.map((w) => w.run()));
}
