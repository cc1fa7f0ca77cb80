/**
 * What `saga start` checks before anything starts, shared with `saga watch` (which checks the same once for
 * every saga it will start): the repository, the flags, the plan file, the config and its agents, the
 * sandbox. Every problem is a UserError (or an EnvironmentError) naming it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { checkRepo } from '../../activities/git-ops';
import { loadSagaConfig } from '../../activities/config-loader';
import { detectSandbox } from '../../activities/sandbox';
import { quickAgentChecks } from '../../activities/agents/checks';
import { knownAgentNames, type SagaConfig } from '../../domain/config/config';
import { resolveAgentProfile } from '../../domain/config/profile-resolution';
import { unconfinedParts } from '../../domain/config/trust';
import type { FlagsResult } from '../../domain/contract/flags-result';
import { hostTaskQueue } from '../../domain/contract/naming';
import { DELIVER_NEEDS_FORGE } from '../../domain/delivery/delivery-config';
import type { Plan } from '../../domain/plan';
import { parsePlanText } from '../../domain/plan/parse-text';
import { parseFlags } from '../../domain/request/flags';
import { defaultHostId, defaultSagaHome } from '../../worker/host-settings';
import { EnvironmentError, UserError } from '../errors';
import { loadSageConfigDefaults } from '../sage-config';
import { modeRefusals } from './start-modes';

export interface StartRequest {
  repo: string;
  argumentsText: string;
  plan?: string;
  agent?: string;
  config?: string;
  name?: string;
  base?: string;
  allowDirty?: boolean;
  /** How this user starts anyway on uncommitted changes, for the error (default: `pass --allow-dirty`). */
  allowDirtyHint?: string;
  /** Skip the agent CLI checks (when the agents run on another machine than this CLI). */
  skipAgentCheck?: boolean;
  /** `--trust-repo-config`: the repository's saga.config.yaml may set what widens what runs. */
  trustRepoConfig?: boolean;
  /** `--deliver`: pull requests on the config's forge for this saga, even with `delivery: local`. */
  deliver?: boolean;
  /** `--from REF`: the issue the request comes from (start-from.ts). */
  from?: string;
  /** Where warnings go before anything starts (trusted repository settings, UNCONFINED, agent checks). */
  warn?: (line: string) => void;
}

/** What every saga of a request shares, once checked. */
export interface CheckedRequest {
  repo: string;
  base: string;
  flags: FlagsResult;
  plan: Plan | null;
  config: SagaConfig;
  unconfined: string[];
  sagaHome: string;
  worktreeRoot: string;
  hostId: string;
  hostQueue: string;
}

/** The checks of `saga start` up to the saga's own goal and name, in the order a user meets them. */
export async function checkStartRequest(request: StartRequest): Promise<CheckedRequest> {
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
  const hostId = defaultHostId();
  return {
    repo: repoInfo.repo,
    base: repoInfo.base,
    flags,
    plan,
    config,
    unconfined,
    sagaHome,
    worktreeRoot: config.worktree.root
      ? path.resolve(repoInfo.repo, config.worktree.root)
      : path.dirname(repoInfo.repo),
    hostId,
    hostQueue: hostTaskQueue(hostId),
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
        `'${repoInfo.base}' and would not contain them (or ${request.allowDirtyHint ?? 'pass --allow-dirty'}).`,
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
