/**
 * `saga continue [NAME]`: continuing is a replay of Temporal's history, never a re-reading of markdown.
 * A running saga needs only a worker; a failed or terminated one resumes in a new run seeded from its
 * last state, so finished tasks are not redone. Which saga: continue-locate.ts; what the history says:
 * continue-history.ts; the record is reconciled with reality before a new run starts:
 * continue-resume-check.ts (a running run whose worker is gone, before a worker picks it up again; one
 * that has a worker, as it goes on: continue-reconcile.ts).
 */
import { finishedTaskCount } from '../../domain/saga/milestone-records';
import os from 'node:os';
import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sagaWorkflowId } from '../../domain/contract/naming';
import type { SagaInput } from '../../domain/saga/saga-input';
import { SagaAwaitingInput, SagaName, SagaPhase, SagaRepo } from '../../domain/contract/search-attributes';
import { withReportedProgress, type SagaState } from '../../domain/saga/saga-state';
import type { MilestoneState } from '../../domain/contract/state';
import { carryQuery } from '../../domain/saga/messages';
import { sagaWorkflow } from '../../workflows/saga/saga';
import { createSagaWorkers, defaultSagaHome } from '../../worker/worker';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { connectionSettings } from '../connection';
import { describeSaga, getStatus } from '../saga-client';
import { reconcileSaga, recordReconciliation } from './continue-reconcile';
import {
  lostMergeChoice,
  reconcileBeforeRestart,
  reconcileBeforeResume,
  type LostMergeChoice,
} from './continue-resume-check';
import { openImplementationProgress, replayProblem, runStart, stateFromHistory } from './continue-history';
import { locate, type Terminal } from './continue-locate';
import { renderStatus, watchUntilDone } from './inspect';
import type { Io } from '../io';

export type { Terminal } from './continue-locate';

async function hasPollers(
  client: Client,
  taskQueue: string,
  kind: 'workflow' | 'activity',
): Promise<boolean> {
  const { TaskQueueType } = temporal.api.enums.v1;
  const res = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType:
      kind === 'workflow' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return (res.pollers ?? []).some(livePoller);
}

/**
 * The server lists a poller for minutes after its worker died (killed, the laptop closed): one of this
 * machine (the SDK's identity is `pid@hostname`) counts while its process lives; another's while it polled
 * within the long poll's minute.
 */
function livePoller(p: temporal.api.taskqueue.v1.IPollerInfo): boolean {
  const [, pid, host] = /^(\d+)@(.+)$/.exec(p.identity ?? '') ?? [];
  if (pid && host === os.hostname()) {
    try {
      process.kill(Number(pid), 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  const last = p.lastAccessTime ? tsToMs(p.lastAccessTime) : Date.now();
  return Date.now() - last < 90_000;
}

/** Whether a worker polls the saga's queues (its workflow queue and, when it has one, its host queue). */
const workerPolling = async (client: Client, taskQueue: string, hostQueue: string | undefined) =>
  (await hasPollers(client, taskQueue, 'workflow')) &&
  (!hostQueue || (await hasPollers(client, hostQueue, 'activity')));

/** Starts a worker in this process (it runs until the saga ends). */
async function startWorker(taskQueue: string, hostQueue: string | undefined, io: Io): Promise<Worker[]> {
  const settings = connectionSettings();
  const connection = await NativeConnection.connect(settings.connectionOptions);
  const hostId = hostQueue?.replace(/^saga-host-/, '');
  const workers = await createSagaWorkers({
    connection,
    namespace: settings.namespace,
    sagaHome: defaultSagaHome(),
    taskQueue,
    ...(hostId ? { hostId } : {}),
  });
  for (const w of workers) void w.run();
  io.out(
    `No worker was polling ${taskQueue}; started one in this process (Ctrl-C stops it; the saga stays safe).`,
  );
  return workers;
}

/**
 * Tasks that were running when the saga stopped are cancelled by the server (their parent closed) and
 * finish their durable handoff: wait for that, so the new run never shares a worktree with them.
 */
async function settleInterruptedTasks(client: Client, milestones: MilestoneState[], io: Io): Promise<void> {
  const running = milestones.flatMap((m) => m.tasks).filter((t) => t.status === 'running' && t.workflowId);
  const open: string[] = [];
  for (const t of running) {
    const handle = client.workflow.getHandle(t.workflowId!);
    const state = await handle.describe().then(
      (d) => d.status.name,
      () => 'GONE',
    );
    if (state !== 'RUNNING') continue;
    await handle.cancel().catch(() => undefined);
    open.push(t.workflowId!);
  }
  if (!open.length) return;
  io.out(`Waiting for ${open.length} interrupted task(s) to commit their work and remove their worktrees...`);
  const deadline = Date.now() + 120_000;
  for (const id of open) {
    while (Date.now() < deadline) {
      const state = await client.workflow
        .getHandle(id)
        .describe()
        .then(
          (d) => d.status.name,
          () => 'GONE',
        );
      if (state !== 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A new run of the saga from `carry` (from the start when there is none); the old run is closed. */
async function startFromState(
  client: Client,
  taskQueue: string,
  input: SagaInput,
  carry: SagaState | null,
  io: Io,
): Promise<void> {
  if (carry) await settleInterruptedTasks(client, carry.milestones, io);
  await client.workflow.start(sagaWorkflow, {
    taskQueue,
    workflowId: sagaWorkflowId(input.name),
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    // Interactions that were open are asked again by the new run.
    args: carry ? [input, { ...carry, hub: { pending: [], answered: carry.hub.answered } }] : [input],
    staticSummary: `Saga ${input.name} (continued)`,
    typedSearchAttributes: [
      { key: SagaName, value: input.name },
      { key: SagaPhase, value: carry ? 'implementation' : 'planning' },
      { key: SagaRepo, value: input.repo },
      { key: SagaAwaitingInput, value: false },
    ],
  });
}

const resumedText = (carry: SagaState | null): string => {
  if (!carry) return 'its plan had not been approved; planning starts again in a new run.';
  const finished = finishedTaskCount(carry.milestones);
  return `resumed in a new run from its last state (${finished} finished task(s) kept, not redone).`;
};

export async function continueCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
  terminal: Terminal = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const lostMerges = lostMergeChoice(str(args, 'lost-merges'));
  const client = await connect();
  const name = await locate(client, args.positionals[0], terminal);
  return continueSaga(client, name, io, { detach: bool(args, 'detach'), lostMerges, terminal });
}

/**
 * Continues the saga `name` (`saga continue NAME`, and `saga start` with an empty goal). It follows the
 * saga when it started the worker itself (unless `detach`), or when asked to (`follow`).
 */
export async function continueSaga(
  client: Client,
  name: string,
  io: Io,
  opts: { detach?: boolean; follow?: boolean; lostMerges?: LostMergeChoice; terminal: Terminal },
): Promise<number> {
  const { terminal, lostMerges } = opts;
  const desc = await describeSaga(client, name);
  const state = desc.status.name;
  if (state === 'COMPLETED') {
    io.out(`Saga '${name}' is finished; nothing to continue. See: saga status ${name}`);
    return 0;
  }
  const run = client.workflow.getHandle(sagaWorkflowId(name), desc.runId);
  const history = await run.fetchHistory();
  const { input } = await runStart(client, name, history);
  // A new run starts from a state checked against git first (and a lost merge answered).
  const checked = (carry: SagaState | null) =>
    carry ? reconcileBeforeResume(carry, input, io, terminal, lostMerges) : Promise.resolve(carry);
  const unreplayable = await replayProblem(history, sagaWorkflowId(name));
  const polling = await workerPolling(client, desc.taskQueue, input.hostQueue);
  // A run whose worker is gone is checked (a lost merge answered) before a worker picks it up again.
  const found =
    state === 'RUNNING' && !unreplayable && !polling
      ? await reconcileBeforeRestart(client, history, input, io, terminal, lostMerges)
      : null;
  const workers = polling ? null : await startWorker(desc.taskQueue, input.hostQueue, io);
  try {
    // The run cannot take it as input: it is told first thing, before it reaches acceptance and REPORT.md.
    if (found) await recordReconciliation(client, { name, sagaDir: input.sagaDir }, found, io);
    if (unreplayable) {
      // Made by other code (an upgrade): the saga crosses it by its state, not by replaying that code.
      const carry = await checked(await stateFromHistory(client, name, history));
      if (state === 'RUNNING')
        await run.terminate(`saga continue: this code cannot replay the run (${unreplayable})`);
      await startFromState(client, desc.taskQueue, input, carry, io);
      io.out(
        `Saga '${name}': its run was made by code this version cannot replay (${unreplayable}). ` +
          resumedText(carry),
      );
    } else if (state !== 'RUNNING') {
      // Queries on a closed run are answered by replaying its history on a worker.
      const carried = await run.query(carryQuery);
      // The task states of an implementation phase that was running are its own.
      const live = carried && (await openImplementationProgress(client, history));
      const carry = await checked(carried && live ? withReportedProgress(carried, [{ live }]) : carried);
      await startFromState(client, desc.taskQueue, input, carry, io);
      io.out(
        carry
          ? `Saga '${name}' had ${state.toLowerCase()}; ${resumedText(carry)}`
          : `Saga '${name}' had ${state.toLowerCase()} before its plan was approved; planning starts again in a new run.`,
      );
    }
    const status = await getStatus(client, name);
    io.out(renderStatus(status));
    // A run that kept running (it only needed a worker) is reconciled as it goes on.
    if (state === 'RUNNING' && !unreplayable && !found && status.milestones.length)
      await reconcileSaga(client, status, io);
    if (workers ? opts.detach : !opts.follow) return 0;
    return await watchUntilDone(client, name, io);
  } finally {
    if (workers) for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
}
