/**
 * `saga continue [NAME]`: continuing is a replay of Temporal's history, never a re-reading of markdown.
 * A running saga needs only a worker; a failed or terminated one resumes in a new run seeded from its
 * last state, so finished tasks are not redone. The record is reconciled with reality (continue-reconcile.ts).
 */
import { createInterface } from 'node:readline/promises';
import { WorkflowIdReusePolicy, type Client, type WorkflowHandle } from '@temporalio/client';
import { tsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { sagaWorkflowId } from '../../domain/saga/naming';
import type { SagaInput } from '../../domain/saga/saga-input';
import { SagaAwaitingInput, SagaName, SagaPhase, SagaRepo } from '../../domain/saga/search-attributes';
import { migrateSagaState, withReportedProgress, type SagaState } from '../../domain/saga/saga-state';
import type { MilestoneState, ProgressEvent } from '../../domain/saga/state';
import type { LiveProgress } from '../../domain/saga/phase-progress';
import { carryQuery, implementationProgressQuery } from '../../workflows/definitions';
import {
  implementationWorkflow,
  type ImplementationInput,
  type ImplementationResult,
} from '../../workflows/implementation';
import { sagaWorkflow } from '../../workflows/saga';
import { createSagaWorkers, defaultSagaHome, installRuntime } from '../../worker/worker';
import { workflowCode } from '../../worker/workflow-bundle';
import { dataConverterFromEnv } from '../../codec/config';
import { bool, parseArgs } from '../args';
import { connectionSettings } from '../connection';
import { UserError } from '../errors';
import { fromRawPayload } from '../payloads';
import { describeSaga, getStatus, listSagas, type SagaListEntry } from '../saga-client';
import { reconcileSaga } from './continue-reconcile';
import { renderStatus, watchUntilDone } from './inspect';
import type { Io } from './server';

const CLOSED_RESUMABLE = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

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
  return (res.pollers ?? []).length > 0;
}

/** Where `saga continue` asks which saga when several are active (the terminal, unless a test says). */
export interface Terminal {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
}

/**
 * Finds the saga: by name, else the only active one; several active → asked at a terminal, refused with
 * their names in a script (which must say which one).
 */
async function locate(client: Client, name: string | undefined, terminal: Terminal): Promise<string> {
  if (name) return name;
  const sagas = await listSagas(client);
  const active = sagas.filter((s) => s.status === 'RUNNING');
  if (active.length === 1) return active[0]!.name;
  if (active.length > 1) {
    // Numbered in the order they started, so the numbers mean the same at every call.
    const rows = await describeActive(
      client,
      [...active].sort((a, b) => a.startTime.localeCompare(b.startTime)),
    );
    if (terminal.input.isTTY) return chooseSaga(rows, terminal);
    throw new UserError(
      `Several sagas are active; say which one: saga continue NAME\n${rows.map((r) => `  ${r.line}`).join('\n')}`,
    );
  }
  const resumable = sagas.filter((s) => CLOSED_RESUMABLE.includes(s.status));
  throw new UserError(
    resumable.length
      ? `No saga is running. These ended early and can be continued by name:\n${resumable.map((s) => `  ${s.name} (${s.status})`).join('\n')}`
      : 'No saga to continue. Start one: saga start --repo PATH -- "your goal"',
  );
}

/** One line per active saga: name, phase, whether it waits for input, repo (from its search attributes). */
async function describeActive(
  client: Client,
  active: SagaListEntry[],
): Promise<{ name: string; line: string }[]> {
  const repos = await Promise.all(
    active.map((s) =>
      client.workflow
        .getHandle(s.workflowId)
        .describe()
        .then(
          (d) => d.typedSearchAttributes.get(SagaRepo) ?? '?',
          () => '?',
        ),
    ),
  );
  const width = Math.max(...active.map((s) => s.name.length));
  return active.map((s, i) => ({
    name: s.name,
    line: [
      s.name.padEnd(width),
      `phase ${s.phase ?? '?'}`,
      s.awaitingInput ? 'waiting for input' : 'no pending input',
      `repo ${repos[i]}`,
    ].join('  '),
  }));
}

/** Lists the sagas and reads a number or a name until one matches; end of input chooses none. */
async function chooseSaga(rows: { name: string; line: string }[], terminal: Terminal): Promise<string> {
  const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: true });
  // Ctrl-C or end of input closes the prompt, and a pending question then gives up (no hang).
  const closing = new AbortController();
  rl.on('SIGINT', () => rl.close());
  rl.on('close', () => closing.abort());
  try {
    terminal.output.write(
      `Several sagas are active:\n${rows.map((r, i) => `  ${i + 1}) ${r.line}`).join('\n')}\n`,
    );
    while (!closing.signal.aborted) {
      const answer = (
        await rl
          .question(`Which saga? (1-${rows.length} or a name): `, { signal: closing.signal })
          .catch(() => null)
      )?.trim();
      if (answer === undefined) break;
      const byNumber = /^\d+$/.test(answer) ? rows[Number(answer) - 1] : undefined;
      const chosen = byNumber ?? rows.find((r) => r.name === answer);
      if (chosen) return chosen.name;
      terminal.output.write(`'${answer}' is neither a number from 1 to ${rows.length} nor a listed name.\n`);
    }
    throw new UserError('No saga chosen; nothing continued. Say which one: saga continue NAME');
  } finally {
    rl.close();
  }
}

/** Starts a worker in this process when no worker polls the saga's queues (it runs until the saga ends). */
async function ensureWorker(
  client: Client,
  taskQueue: string,
  hostQueue: string | undefined,
  io: Io,
): Promise<Worker[] | null> {
  const polling =
    (await hasPollers(client, taskQueue, 'workflow')) &&
    (!hostQueue || (await hasPollers(client, hostQueue, 'activity')));
  if (polling) return null;
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

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** What the run was started with: the saga's input, and the state it started from (none for a first run). */
async function runStart(
  client: Client,
  name: string,
  history: History,
): Promise<{ input: SagaInput; state: unknown }> {
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  if (!payloads[0]) throw new UserError(`Saga '${name}' has no recorded input; it cannot be continued.`);
  return {
    input: await fromRawPayload<SagaInput>(client, payloads[0]),
    state: payloads[1] ? await fromRawPayload<unknown>(client, payloads[1]) : undefined,
  };
}

/**
 * Null when this code replays the run's history; else why not (the run was made by other code). Continuing
 * is a replay, so this is the replay a worker would make, done here first.
 */
async function replayProblem(history: History, workflowId: string): Promise<string | null> {
  installRuntime();
  try {
    // An encrypted history replays only with the codec the worker uses.
    await Worker.runReplayHistory(
      { ...workflowCode(), dataConverter: dataConverterFromEnv() },
      history,
      workflowId,
    );
    return null;
  } catch (error) {
    if (error instanceof Error && error.name === 'DeterminismViolationError')
      return error.message.split('\n')[0] ?? error.message;
    throw error;
  }
}

/**
 * The saga's last state without replaying its code: the state its run started from (a phase boundary),
 * migrated to this version, with the progress its children reported since: signals from planning and
 * validation, each finished implementation phase's result, and the task states of one still open when the
 * run ended. Null before a plan was approved.
 */
async function stateFromHistory(client: Client, name: string, history: History): Promise<SagaState | null> {
  const { state } = await runStart(client, name, history);
  if (state === undefined) return null;
  let start: SagaState;
  try {
    start = migrateSagaState(state);
  } catch (error) {
    throw new UserError(`Saga '${name}' cannot be continued: ${(error as Error).message}`);
  }
  type Reported = Parameters<typeof withReportedProgress>[1];
  const perEvent = await Promise.all(
    (history.events ?? []).map(async (e): Promise<Reported> => {
      const done = e.childWorkflowExecutionCompletedEventAttributes;
      if (done?.workflowType?.name === implementationWorkflow.name) {
        const result = done.result?.payloads?.[0];
        const live = result && (await fromRawPayload<ImplementationResult>(client, result)).progress;
        return live ? [{ live }] : [];
      }
      const signal = e.workflowExecutionSignaledEventAttributes;
      const payload = signal?.input?.payloads?.[0];
      if (!payload || (signal.signalName !== 'progress' && signal.signalName !== 'progressBatch')) return [];
      const at = e.eventTime ? tsToDate(e.eventTime).toISOString() : new Date(0).toISOString();
      const body = await fromRawPayload<ProgressEvent | ProgressEvent[]>(client, payload);
      return (Array.isArray(body) ? body : [body]).map((event) => ({ at, event }));
    }),
  );
  const reported = perEvent.flat();
  const live = await openImplementationProgress(client, history);
  return withReportedProgress(start, live ? [...reported, { live }] : reported);
}

/** The task states of the implementation phase the run had started and not seen end, if there is one. */
async function openImplementationProgress(client: Client, history: History): Promise<LiveProgress | null> {
  const open = openImplementation(history);
  return open ? implementationProgress(client, open) : null;
}

/** The implementation phase the run started and had not seen end (its workflow id), if any. */
function openImplementation(history: History): string | null {
  let open: string | null = null;
  for (const e of history.events ?? []) {
    const started = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (started?.workflowType?.name === implementationWorkflow.name) open = started.workflowId ?? null;
    const closed =
      e.childWorkflowExecutionCompletedEventAttributes ??
      e.childWorkflowExecutionFailedEventAttributes ??
      e.childWorkflowExecutionCanceledEventAttributes ??
      e.childWorkflowExecutionTerminatedEventAttributes ??
      e.childWorkflowExecutionTimedOutEventAttributes;
    if (closed?.workflowExecution?.workflowId === open) open = null;
  }
  return open;
}

/**
 * An implementation phase's task states as it last knew them: its `progress` query (a worker replays a
 * closed run); when its code cannot be replayed, the states its latest run started from.
 */
async function implementationProgress(client: Client, workflowId: string): Promise<LiveProgress | null> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    return await client.withDeadline(Date.now() + 30_000, () => handle.query(implementationProgressQuery));
  } catch {
    const first = (await handle.fetchHistory().catch(() => null))?.events?.[0];
    const payload = first?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const carried = payload && (await fromRawPayload<ImplementationInput>(client, payload)).carried;
    return carried ? { milestones: carried.milestones, usage: carried.usage, log: carried.log ?? [] } : null;
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
  const finished = carry.milestones
    .flatMap((m) => m.tasks)
    .filter((t) => ['passed', 'integrated', 'skipped'].includes(t.status)).length;
  return `resumed in a new run from its last state (${finished} finished task(s) kept, not redone).`;
};

export async function continueCommand(
  argv: string[],
  io: Io,
  connect: () => Promise<Client>,
  terminal: Terminal = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const args = parseArgs('continue', argv);
  const client = await connect();
  const name = await locate(client, args.positionals[0], terminal);
  const desc = await describeSaga(client, name);
  const state = desc.status.name;
  if (state === 'COMPLETED') {
    io.out(`Saga '${name}' is finished; nothing to continue. See: saga status ${name}`);
    return 0;
  }
  const run = client.workflow.getHandle(sagaWorkflowId(name), desc.runId);
  const history = await run.fetchHistory();
  const { input } = await runStart(client, name, history);
  const workers = await ensureWorker(client, desc.taskQueue, input.hostQueue, io);
  try {
    const unreplayable = await replayProblem(history, sagaWorkflowId(name));
    if (unreplayable) {
      // Made by other code (an upgrade): the saga crosses it by its state, not by replaying that code.
      const carry = await stateFromHistory(client, name, history);
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
      const carry = carried && live ? withReportedProgress(carried, [{ live }]) : carried;
      await startFromState(client, desc.taskQueue, input, carry, io);
      io.out(
        carry
          ? `Saga '${name}' had ${state.toLowerCase()}; ${resumedText(carry)}`
          : `Saga '${name}' had ${state.toLowerCase()} before its plan was approved; planning starts again in a new run.`,
      );
    }
    const status = await getStatus(client, name);
    io.out(renderStatus(status));
    if (status.milestones.length) await reconcileSaga(client, status, io);
    if (!workers || bool(args, 'detach')) return 0;
    return await watchUntilDone(client, name, io);
  } finally {
    if (workers) for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
}
