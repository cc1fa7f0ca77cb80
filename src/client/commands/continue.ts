/**
 * `saga continue [NAME]`: continuing is a replay of Temporal's history, never a re-reading of markdown.
 * A running saga needs only a worker; a failed or terminated one resumes in a new run seeded from its
 * last state, so finished tasks are not redone. Git reality is reconciled and the projections repaired.
 */
import { createInterface } from 'node:readline/promises';
import { WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createArtifactActivities } from '../../activities/artifacts';
import { createGitActivities } from '../../activities/git';
import { integrationBranch, sagaWorkflowId } from '../../domain/naming';
import type { SagaInput } from '../../domain/saga-input';
import { SagaAwaitingInput, SagaName, SagaPhase, SagaRepo } from '../../domain/search-attributes';
import type { MilestoneState, SagaStatus } from '../../domain/state';
import { carryQuery } from '../../workflows/definitions';
import { sagaWorkflow } from '../../workflows/saga';
import { createSagaWorkers, defaultSagaHome } from '../../worker/worker';
import { bool, parseArgs } from '../args';
import { connectionSettings } from '../connection';
import { UserError } from '../errors';
import { describeSaga, getStatus, listSagas, type SagaListEntry } from '../saga-client';
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

async function reconcile(status: SagaStatus, io: Io): Promise<void> {
  const git = createGitActivities({ sagaHome: defaultSagaHome() });
  const tasks = status.milestones.flatMap((m) =>
    m.tasks.map((t) => ({ key: t.key, branch: t.branch, commit: t.commit })),
  );
  const report = await git.reconcileGit({
    repo: status.repo,
    sagaName: status.name,
    tasks,
    integrationBranch: integrationBranch(status.name),
  });
  io.out(
    report.discrepancies.length
      ? `Git reconciliation found:\n  - ${report.discrepancies.join('\n  - ')}`
      : 'Git agrees with the saga’s record.',
  );
  await createArtifactActivities({ sagaHome: defaultSagaHome() }).writeProgress({
    sagaDir: status.sagaDir,
    status,
  });
  io.out(`Rewrote ${status.sagaDir}/PROGRESS.md from the workflow's state.`);
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

async function startingInput(client: Client, name: string): Promise<SagaInput> {
  const history = await client.workflow.getHandle(sagaWorkflowId(name)).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new UserError(`Saga '${name}' has no recorded input; it cannot be continued.`);
  return defaultPayloadConverter.fromPayload<SagaInput>(payload);
}

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
  const input = await startingInput(client, name);
  const workers = await ensureWorker(client, desc.taskQueue, input.hostQueue, io);
  try {
    if (state !== 'RUNNING') {
      // Queries on a closed run are answered by replaying its history on a worker.
      const carry = await client.workflow.getHandle(sagaWorkflowId(name), desc.runId).query(carryQuery);
      if (carry) await settleInterruptedTasks(client, carry.milestones, io);
      await client.workflow.start(sagaWorkflow, {
        taskQueue: desc.taskQueue,
        workflowId: sagaWorkflowId(name),
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        args: carry ? [input, { ...carry, hub: { pending: [], answered: carry.hub.answered } }] : [input],
        staticSummary: `Saga ${name} (continued)`,
        typedSearchAttributes: [
          { key: SagaName, value: name },
          { key: SagaPhase, value: carry ? 'implementation' : 'planning' },
          { key: SagaRepo, value: input.repo },
          { key: SagaAwaitingInput, value: false },
        ],
      });
      const finished =
        carry?.milestones
          .flatMap((m) => m.tasks)
          .filter((t) => ['passed', 'integrated', 'skipped'].includes(t.status)).length ?? 0;
      io.out(
        carry
          ? `Saga '${name}' had ${state.toLowerCase()}; resumed in a new run from its last state (${finished} finished task(s) kept, not redone).`
          : `Saga '${name}' had ${state.toLowerCase()} before its plan was approved; planning starts again in a new run.`,
      );
    }
    const status = await getStatus(client, name);
    io.out(renderStatus(status));
    if (status.milestones.length) await reconcile(status, io);
    if (!workers || bool(args, 'detach')) return 0;
    return await watchUntilDone(client, name, io);
  } finally {
    if (workers) for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  }
}
