/** `saga start`: validate everything a user typed before anything starts, then start the saga workflow. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { announceModes } from '../../domain/request/mode-resolution';
import { assertSagaName, proposeSagaName, sagaWorkflowId, uiWorkflowUrl } from '../../domain/contract/naming';
import type { SagaInput } from '../../domain/saga/saga-input';
import { sagaStartOptions } from '../../domain/saga/saga-start';
import type { IntakeSource } from '../../domain/tracker/issue';
import { issueSagaName, trackerRefText } from '../../domain/tracker/tracker-ref';
import { oneTerminalLine } from '../../domain/text/terminal';
import type { sagaWorkflow } from '../../workflows/saga/saga';
import { workflowTaskQueue } from '../../worker/host-settings';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { connectionSettings, uiUrlFor } from '../connection';
import { UserError } from '../errors';
import type { Terminal } from './continue-locate';
import type { Io } from '../io';
import { checkStartRequest, type StartRequest } from './start-checks';
import { connectionFor, fromRef, readIssueSource } from './start-from';
import { emptyGoalRequest, NO_GOAL, pickUpSaga } from './start-pickup';

export type { StartRequest } from './start-checks';

/** Builds the saga's input from what the user typed; every problem is a UserError naming it. */
export async function prepareSaga(request: StartRequest, now = new Date()): Promise<SagaInput> {
  // A bad reference is refused before anything else is looked at.
  const ref = request.from ? fromRef(request.from) : null;
  const checked = await checkStartRequest(request);
  const { plan } = checked;
  const source = ref ? await readIssueSource(connectionFor(checked.config, ref.kind), ref) : null;
  // The typed goal wins; a saga from an issue has its title (made safe) for one.
  const goal = checked.flags.goal || source?.title || plan?.problem.split('\n')[0] || '';
  if (!goal && !plan) throw new UserError(NO_GOAL);
  const flags = source && !checked.flags.goal ? { ...checked.flags, goal } : checked.flags;
  // One issue, one saga: its name comes from the reference, so a watch and a start of it are the same saga.
  const name = chooseName(request.name ?? (ref ? issueSagaName(ref) : plan?.name), goal, now);
  const sagaDir = path.join(checked.sagaHome, name);
  if (existsSync(sagaDir)) throw new UserError(alreadyExists(name, source, `(${sagaDir})`));
  return {
    name,
    repo: checked.repo,
    base: checked.base,
    goal,
    arguments: request.argumentsText,
    flags,
    plan,
    planSource: request.plan ? path.resolve(request.plan) : null,
    agent: request.agent ?? null,
    configFile: request.config ? path.resolve(request.config) : null,
    ...(request.trustRepoConfig ? { trustRepoConfig: true } : {}),
    ...(request.deliver ? { deliver: true } : {}),
    ...(source ? { source } : {}),
    ...(checked.unconfined.length ? { unconfined: checked.unconfined } : {}),
    sagaHome: checked.sagaHome,
    sagaDir,
    worktreeRoot: checked.worktreeRoot,
    hostId: checked.hostId,
    hostQueue: checked.hostQueue,
    uiBaseUrl: null,
    startedAt: now.toISOString(),
  };
}

/** The error of a name already taken: a saga from an issue says the issue already has its saga. */
function alreadyExists(name: string, source: IntakeSource | null | undefined, where: string): string {
  return source
    ? `The issue ${trackerRefText(source.ref)} already has a saga: '${name}' ${where}. See saga status ${name} ` +
        '(or give another --name to start a second one).'
    : `A saga named '${name}' already exists ${where}. Pick another --name.`;
}

/** `--name`, the plan's name, or one proposed from the goal; a valid saga name. */
function chooseName(given: string | undefined, goal: string, now: Date): string {
  try {
    return assertSagaName(given ?? proposeSagaName(goal, now));
  } catch (error) {
    throw new UserError(`--name: ${(error as Error).message}`);
  }
}

export async function startSaga(client: Client, input: SagaInput): Promise<string> {
  try {
    // By its type name: importing the workflow function would load all workflow code into the CLI.
    const handle = await client.workflow.start<typeof sagaWorkflow>('sagaWorkflow', {
      ...sagaStartOptions(input),
      taskQueue: workflowTaskQueue(),
    });
    return handle.firstExecutionRunId;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw new UserError(alreadyExists(input.name, input.source, 'on this server'));
    }
    throw error;
  }
}

/** The slash-command text: the ARGUMENTS words (before and after `--`), joined by spaces. */
export function joinArguments(args: { positionals: string[] }): string {
  return args.positionals.join(' ');
}

export async function startCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
  terminal: Terminal = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const repo = str(args, 'repo');
  if (!repo) throw new UserError('saga start: --repo PATH is required.');
  // Routes to the server are refused in the config (domain/config/trust.ts), also when a TOML profile names it.
  process.env.TEMPORAL_ADDRESS ||= connectionSettings().address;
  // A saga from an issue has its goal: nothing to pick up.
  const pickup = str(args, 'from') ? null : await emptyGoalRequest(args, joinArguments(args));
  if (pickup) return pickUpSaga(await connect(), { ...pickup, follow: bool(args, 'wait') }, io, terminal);
  const input = await prepareSaga({
    repo,
    argumentsText: joinArguments(args),
    plan: str(args, 'plan'),
    agent: str(args, 'agent'),
    config: str(args, 'config'),
    name: str(args, 'name'),
    base: str(args, 'base'),
    allowDirty: bool(args, 'allow-dirty'),
    skipAgentCheck: bool(args, 'skip-agent-check'),
    trustRepoConfig: bool(args, 'trust-repo-config'),
    deliver: bool(args, 'deliver'),
    from: str(args, 'from'),
    warn: (line) => io.err(line),
  });
  const client = await connect();
  input.uiBaseUrl = uiUrlFor(connectionSettings().address);
  await startSaga(client, input);
  io.out(announceModes(input.flags, { product: 'Saga', workflow: 'saga' }));
  if (input.source) io.out(sourceLine(trackerRefText(input.source.ref), input.source.url));
  io.out(`Started saga '${input.name}' (workflow ${sagaWorkflowId(input.name)}).`);
  if (input.uiBaseUrl)
    io.out(`Web UI: ${uiWorkflowUrl(input.uiBaseUrl, client.options.namespace, sagaWorkflowId(input.name))}`);
  io.out(`It waits for you to confirm its name: saga respond ${input.name} confirm-name confirm`);
  if (bool(args, 'wait')) {
    const { watchUntilDone } = await import('./inspect');
    return watchUntilDone(client, input.name, io);
  }
  return 0;
}

/** Where a saga from an issue came from, as `saga start` and `saga status` print it (the url is the tracker's). */
export const sourceLine = (ref: string, url: string): string => `Source: ${ref} (${oneTerminalLine(url)})`;
