/** `saga start`: validate everything a user typed before anything starts, then start the saga workflow. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { checkRepo } from '../../activities/git-ops';
import { loadSagaConfig } from '../../activities/config-loader';
import { detectSandbox } from '../../activities/sandbox';
import { quickAgentChecks } from '../../activities/agents/checks';
import { type SagaConfig } from '../../domain/config/config';
import { resolveAgentProfile } from '../../domain/config/profile-resolution';
import { knownAgentNames } from '../../domain/config/config';
import { unconfinedParts } from '../../domain/config/trust';
import { DELIVER_NEEDS_FORGE } from '../../domain/delivery/delivery-config';
import { parseFlags } from '../../domain/request/flags';
import { announceModes } from '../../domain/request/mode-resolution';
import { modeRefusals } from './start-modes';
import {
  assertSagaName,
  hostTaskQueue,
  proposeSagaName,
  sagaWorkflowId,
  uiWorkflowUrl,
} from '../../domain/contract/naming';
import type { Plan } from '../../domain/plan';
import { parsePlanText } from '../../domain/plan/parse-text';
import type { SagaInput } from '../../domain/saga/saga-input';
import { SagaAwaitingInput, SagaName, SagaPhase, SagaRepo } from '../../domain/contract/search-attributes';
import type { sagaWorkflow } from '../../workflows/saga/saga';
import { defaultHostId, defaultSagaHome, workflowTaskQueue } from '../../worker/host-settings';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { connectionSettings, uiUrlFor } from '../connection';
import { EnvironmentError, UserError } from '../errors';
import { loadSageConfigDefaults } from '../sage-config';
import type { Terminal } from './continue-locate';
import type { Io } from '../io';
import { emptyGoalRequest, NO_GOAL, pickUpSaga } from './start-pickup';

export interface StartRequest {
  repo: string;
  argumentsText: string;
  plan?: string;
  agent?: string;
  config?: string;
  name?: string;
  base?: string;
  allowDirty?: boolean;
  /** Skip the agent CLI checks (when the agents run on another machine than this CLI). */
  skipAgentCheck?: boolean;
  /** `--trust-repo-config`: the repository's saga.config.yaml may set what widens what runs. */
  trustRepoConfig?: boolean;
  /** `--deliver`: pull requests on the config's forge for this saga, even with `delivery: local`. */
  deliver?: boolean;
  /** Where warnings go before anything starts (trusted repository settings, UNCONFINED, agent checks). */
  warn?: (line: string) => void;
}

/** Builds the saga's input from what the user typed; every problem is a UserError naming it. */
export async function prepareSaga(request: StartRequest, now = new Date()): Promise<SagaInput> {
  const warn = request.warn ?? (() => undefined);
  const repoInfo = await checkRepository(request);
  const flags = parseFlags(
    request.argumentsText,
    loadSageConfigDefaults(path.join(repoInfo.repo, '.sage', 'config.yaml')),
  );
  if (flags.error) throw new UserError(`Saga: ${flags.error}`);
  const plan = request.plan ? readPlanFile(request.plan) : null;
  const sagaHome = defaultSagaHome();
  const config = await loadConfig(repoInfo.repo, sagaHome, request);
  if (request.deliver && !config.forge) throw new UserError(`saga start: ${DELIVER_NEEDS_FORGE}.`);
  const unconfined = unconfinedParts(config, knownAgentNames(config));
  for (const part of unconfined) warn(`WARNING: UNCONFINED: ${part} runs without the sandbox.`);
  for (const refusal of modeRefusals(config, request.agent, flags)) warn(`Note: ${refusal}`);
  if (!request.skipAgentCheck) await refuseAgentsThatCannotRun(config, request.agent, plan, warn);

  const goal = flags.goal || plan?.problem.split('\n')[0] || '';
  if (!goal && !plan) throw new UserError(NO_GOAL);
  const name = chooseName(request.name ?? plan?.name, goal, now);
  const sagaDir = path.join(sagaHome, name);
  if (existsSync(sagaDir))
    throw new UserError(`A saga named '${name}' already exists (${sagaDir}). Pick another --name.`);
  const hostId = defaultHostId();
  return {
    name,
    repo: repoInfo.repo,
    base: repoInfo.base,
    goal,
    arguments: request.argumentsText,
    flags,
    plan,
    planSource: request.plan ? path.resolve(request.plan) : null,
    agent: request.agent ?? null,
    configFile: request.config ? path.resolve(request.config) : null,
    ...(request.trustRepoConfig ? { trustRepoConfig: true } : {}),
    ...(request.deliver ? { deliver: true } : {}),
    ...(unconfined.length ? { unconfined } : {}),
    sagaHome,
    sagaDir,
    worktreeRoot: config.worktree.root
      ? path.resolve(repoInfo.repo, config.worktree.root)
      : path.dirname(repoInfo.repo),
    hostId,
    hostQueue: hostTaskQueue(hostId),
    uiBaseUrl: null,
    startedAt: now.toISOString(),
  };
}

/** The repository exists, is a git repository with the base branch, and is clean (or `--allow-dirty`). */
async function checkRepository(request: StartRequest) {
  const repoArg = path.resolve(request.repo);
  if (!existsSync(repoArg)) throw new UserError(`--repo ${request.repo}: no such folder.`);
  let repoInfo: Awaited<ReturnType<typeof checkRepo>>;
  try {
    repoInfo = await checkRepo({ repo: repoArg, ...(request.base ? { base: request.base } : {}) });
  } catch (error) {
    throw new UserError(`--repo ${request.repo}: ${(error as Error).message}`);
  }
  if (!repoInfo.clean && !request.allowDirty) {
    throw new UserError(
      `--repo ${repoInfo.repo} has uncommitted changes (${repoInfo.dirtyFiles.slice(0, 5).join(', ')}` +
        `${repoInfo.dirtyFiles.length > 5 ? ', ...' : ''}). Commit or stash them first: task branches start from ` +
        `'${repoInfo.base}' and would not contain them (or pass --allow-dirty).`,
    );
  }
  return repoInfo;
}

/** `--plan FILE`, parsed and validated. */
function readPlanFile(planArg: string): Plan {
  const file = path.resolve(planArg);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(
      `--plan ${planArg}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error}).`,
    );
  }
  const parsed = parsePlanText(text, path.basename(file));
  if (!parsed.ok) throw new UserError(`Invalid plan file ${file}:\n  - ${parsed.errors.join('\n  - ')}`);
  return parsed.plan;
}

/**
 * The saga config (`--config FILE` or the saga home's, the repository's over it), with `--agent` one of its
 * profiles. Settings the repository's file may only set when trusted are printed before anything runs.
 */
async function loadConfig(repo: string, sagaHome: string, request: StartRequest): Promise<SagaConfig> {
  let config: SagaConfig;
  try {
    const loaded = await loadSagaConfig({
      repo,
      sagaHome,
      ...(request.config ? { configFile: request.config } : {}),
      ...(request.trustRepoConfig ? { trustRepoConfig: true } : {}),
      onRepoWidening: (file, settings) => {
        for (const setting of settings) {
          request.warn?.(`--trust-repo-config: ${file}: ${setting} (set by the repository)`);
        }
      },
    });
    config = loaded.config;
  } catch (error) {
    throw new UserError((error as Error).message);
  }
  if (request.agent && !knownAgentNames(config).includes(request.agent)) {
    throw new UserError(
      `--agent ${request.agent}: unknown agent profile. Known: ${knownAgentNames(config).join(', ')}.`,
    );
  }
  return config;
}

/** `--name`, the plan's name, or one proposed from the goal; a valid saga name. */
function chooseName(given: string | undefined, goal: string, now: Date): string {
  try {
    return assertSagaName(given ?? proposeSagaName(goal, now));
  } catch (error) {
    throw new UserError(`--name: ${(error as Error).message}`);
  }
}

/**
 * The cheap part of `saga doctor` for the agents this saga will use (the chosen or default profile and any
 * a plan task names): installed and with credentials. Nothing has started yet when it refuses.
 */
async function refuseAgentsThatCannotRun(
  config: SagaConfig,
  agent: string | undefined,
  plan: Plan | null,
  warn: (line: string) => void,
) {
  // Checks and set-up commands run confined too: no sandbox here, no saga, unless `sandbox: none`.
  if (config.sandbox === 'auto') {
    await detectSandbox().catch((error: Error) => {
      throw new EnvironmentError(
        `Cannot start: checks and set-up commands cannot run confined: ${error.message}. Pass ` +
          '--skip-agent-check when the agents run on another machine.',
      );
    });
  }
  const names = new Set([agent ?? config.default_agent]);
  for (const m of plan?.milestones ?? []) for (const t of m.tasks) if (t.agent) names.add(t.agent);
  for (const name of names) {
    if (!knownAgentNames(config).includes(name)) continue; // the plan's own validation names it
    const results = await quickAgentChecks(resolveAgentProfile(config, name));
    for (const r of results.filter((c) => c.level === 'warn'))
      warn(`Warning: ${name}: ${r.name}: ${r.detail}`);
    const failed = results.filter((r) => r.level === 'fail');
    if (failed.length)
      throw new EnvironmentError(
        `Cannot start: ${failed.map((r) => `${r.name}: ${r.detail.replace(/\.$/, '')}`).join('; ')}. ` +
          `Check with 'saga doctor --agent ${name}', pick another with --agent, or pass --skip-agent-check ` +
          'when the agents run on another machine.',
      );
  }
}

export async function startSaga(client: Client, input: SagaInput): Promise<string> {
  try {
    // By its type name: importing the workflow function would load all workflow code into the CLI.
    const handle = await client.workflow.start<typeof sagaWorkflow>('sagaWorkflow', {
      taskQueue: workflowTaskQueue(),
      workflowId: sagaWorkflowId(input.name),
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      staticSummary: `Saga ${input.name}: ${input.goal}`.slice(0, 200),
      typedSearchAttributes: [
        { key: SagaName, value: input.name },
        { key: SagaPhase, value: 'planning' },
        { key: SagaRepo, value: input.repo },
        { key: SagaAwaitingInput, value: false },
      ],
    });
    return handle.firstExecutionRunId;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw new UserError(`A saga named '${input.name}' already exists on this server. Pick another --name.`);
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
  const pickup = await emptyGoalRequest(args, joinArguments(args));
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
    warn: (line) => io.err(line),
  });
  const client = await connect();
  input.uiBaseUrl = uiUrlFor(connectionSettings().address);
  await startSaga(client, input);
  io.out(announceModes(input.flags, { product: 'Saga', workflow: 'saga' }));
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
