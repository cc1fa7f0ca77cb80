/**
 * `saga watch --repo R --from SCOPE --label L [--max N] [--poll SECONDS] [-- "flags"]` (docs/PROCEDURE.md
 * §14): checks once what `saga start` checks for every saga it will start, asks the tracker for the labelled
 * issues once (it answers, the token is good), then starts the watch workflow, which starts one saga per
 * newly labelled issue. `--stop` ends it, `--status` prints what it did.
 */
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { watchStatusQuery, watchStopSignal } from '../../domain/saga/messages';
import type { TrackerWatchInput, TrackerWatchStatus } from '../../domain/tracker/issue-sync';
import { trackerScopeText, type TrackerScope } from '../../domain/tracker/tracker-ref';
import { watchLabelProblem, watchWorkflowId } from '../../domain/tracker/watch-id';
import { workflowTaskQueue } from '../../worker/host-settings';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { connectionSettings } from '../connection';
import { EXIT, UserError } from '../errors';
import type { Io } from '../io';
import { checkStartRequest } from './start-checks';
import { connectionFor, fromScope, readLabelledIssues } from './start-from';
import { joinArguments } from './start';
import { watchStatusLines } from './watch-status';

/** How long `--stop` waits for the watch to end (it finishes the start or poll at hand first). */
const STOP_WAIT_MS = 120_000;

export async function watchCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const scope = fromScope(str(args, 'from') ?? '');
  const label = str(args, 'label') ?? '';
  const problem = watchLabelProblem(label);
  if (problem) throw new UserError(`--label '${label}': the label ${problem}.`);
  if (bool(args, 'stop') && bool(args, 'status'))
    throw new UserError('saga watch: give --stop or --status, not both.');
  const id = watchWorkflowId(scope, label);
  const what = `watch of ${trackerScopeText(scope)} label '${label}'`;
  if (bool(args, 'stop')) return stopWatch(await connect(), id, what, io);
  if (bool(args, 'status')) return printWatchStatus(await connect(), id, what, bool(args, 'json'), io);
  const input = await prepareWatch(args, scope, label, io);
  return startWatch(await connect(), id, input, what, io);
}

/** `--max N` or `--poll SECONDS`: a whole number within what `intake:` allows for the same setting. */
function intOption(args: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const text = str(args, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw new UserError(`--${name} ${text}: give a whole number from ${min} to ${max}.`);
  return value;
}

/** The watch's input, checked as `saga start` checks a saga's (repository, flags, config, agents). */
async function prepareWatch(
  args: ParsedArgs,
  scope: TrackerScope,
  label: string,
  io: Io,
): Promise<TrackerWatchInput> {
  const repo = str(args, 'repo');
  if (!repo)
    throw new UserError('saga watch: --repo PATH is required to start a watch (the sagas work on it).');
  const maxSagas = intOption(args, 'max', 1, 50);
  const pollSeconds = intOption(args, 'poll', 5, 86_400);
  process.env.TEMPORAL_ADDRESS ||= connectionSettings().address;
  const argumentsText = joinArguments(args);
  const request = {
    repo,
    argumentsText,
    agent: str(args, 'agent'),
    config: str(args, 'config'),
    base: str(args, 'base'),
    allowDirty: bool(args, 'allow-dirty'),
    skipAgentCheck: bool(args, 'skip-agent-check'),
    trustRepoConfig: bool(args, 'trust-repo-config'),
    deliver: bool(args, 'deliver'),
    warn: (line: string) => io.err(line),
  };
  const checked = await checkStartRequest(request);
  if (checked.flags.goal)
    throw new UserError(
      `saga watch: ARGUMENTS are flags only (e.g. -- "--parallel=2"); each saga's goal is its issue's ` +
        `title, so '${checked.flags.goal}' has no place here.`,
    );
  const tracker = connectionFor(checked.config, scope.kind);
  const labelled = await readLabelledIssues(tracker, scope, label);
  io.out(`${trackerScopeText(scope)} answers: ${labelled.length} open issue(s) labelled '${label}' now.`);
  return {
    scope,
    label,
    tracker,
    maxSagas: maxSagas ?? checked.config.intake.max_sagas,
    pollSeconds: pollSeconds ?? checked.config.intake.poll_seconds,
    argumentsText,
    template: {
      repo: checked.repo,
      base: checked.base,
      agent: request.agent ?? null,
      configFile: request.config ? path.resolve(request.config) : null,
      trustRepoConfig: request.trustRepoConfig,
      deliver: request.deliver,
      unconfined: checked.unconfined,
      sagaHome: checked.sagaHome,
      worktreeRoot: checked.worktreeRoot,
      hostId: checked.hostId,
      hostQueue: checked.hostQueue,
    },
  };
}

const stopHint = (input: { scope: TrackerScope; label: string }): string =>
  `saga watch --stop --from ${trackerScopeText(input.scope)} --label '${input.label}'`;

async function startWatch(
  client: Client,
  id: string,
  input: TrackerWatchInput,
  what: string,
  io: Io,
): Promise<number> {
  try {
    // By its type name, as startSaga starts the saga: the CLI loads no workflow code. A watch that ended
    // may be started again under the same id (the default reuse policy); a running one is refused.
    await client.workflow.start('trackerWatchWorkflow', {
      taskQueue: workflowTaskQueue(),
      workflowId: id,
      args: [input],
      staticSummary: `Watch ${trackerScopeText(input.scope)} label ${input.label}`.slice(0, 200),
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    io.out(`The ${what} is already running (workflow ${id}). Stop it: ${stopHint(input)}`);
    return EXIT.ok;
  }
  io.out(
    `Started the ${what} (workflow ${id}): one saga per newly labelled issue, named after it and confirmed by ` +
      `the label; at most ${input.maxSagas} at once, polling every ${input.pollSeconds} s.`,
  );
  io.out(
    `Status: saga list, or saga watch --status --from ${trackerScopeText(input.scope)} --label '${input.label}'`,
  );
  io.out(`Stop: ${stopHint(input)}`);
  return EXIT.ok;
}

/** Whether the watch `id` runs now. */
async function isRunning(client: Client, id: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(id).describe()).status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** Signals the watch to stop and waits for it to end; nothing running is not an error (scripts stop twice). */
async function stopWatch(client: Client, id: string, what: string, io: Io): Promise<number> {
  if (!(await isRunning(client, id))) {
    io.out(`No ${what} is running (workflow ${id}); nothing to stop.`);
    return EXIT.ok;
  }
  const handle = client.workflow.getHandle(id);
  await handle.signal(watchStopSignal);
  const ended = await Promise.race([
    handle.result().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), STOP_WAIT_MS).unref()),
  ]);
  io.out(
    ended
      ? `Stopped the ${what}. The sagas it started go on (saga list).`
      : `Asked the ${what} to stop (workflow ${id}); it ends after the step at hand.`,
  );
  return EXIT.ok;
}

async function printWatchStatus(
  client: Client,
  id: string,
  what: string,
  json: boolean,
  io: Io,
): Promise<number> {
  if (!(await isRunning(client, id))) throw new UserError(`No ${what} is running (workflow ${id}).`);
  const status: TrackerWatchStatus = await client.workflow.getHandle(id).query(watchStatusQuery);
  io.out(json ? JSON.stringify(status, null, 2) : watchStatusLines(status).join('\n'));
  return EXIT.ok;
}
