/**
 * Saga-level activities: the run settings fixed at start, the saga directory's first files, the planner's
 * pre-flight context and the audit trail of automatic decisions (written BEFORE the action they record).
 */
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { withSecretsOutOfHistory } from '../../domain/config/agent-env';
import {
  checkTimeoutMs,
  handoffSettings,
  heartbeatTimeoutMs,
  type SagaConfig,
} from '../../domain/config/config';
import { resolveAgentProfile } from '../../domain/config/profile-resolution';
import { knownAgentNames } from '../../domain/config/config';
import { budgetSettings } from '../../domain/fleet/budget';
import { deliverySettings } from '../../domain/delivery/delivery-config';
import { intakeSettings } from '../../domain/tracker/intake-config';
import type { TrackerRef } from '../../domain/tracker/tracker-ref';
import type { FlagsResult } from '../../domain/contract/flags-result';
import type { RunSettings } from '../../domain/saga/saga-input';
import type { createArtifactActivities } from '../artifacts';
import { logAutoPick, type AutoPickInput } from './auto-pick';
import { loadSagaConfig } from '../config-loader';
import { planningContext, type PlanningContext } from './planning-context';
import { recordSagaAnswers } from '../artifacts/projector';

export type { PlanningContext } from './planning-context';

type Artifacts = ReturnType<typeof createArtifactActivities>;

/** Each agent's profile, subagent dispatch and timeout; profiles keep their secrets as references. */
function agentSettings(
  config: SagaConfig,
  source: string | null,
  envSources: Record<string, string | null>,
  sources: { user: string | null; repo: string | null },
) {
  const profiles: RunSettings['profiles'] = {};
  const subagentDispatch: RunSettings['subagentDispatch'] = {};
  const agentTimeoutMs: RunSettings['agentTimeoutMs'] = {};
  for (const name of knownAgentNames(config)) {
    const profile = resolveAgentProfile(config, name);
    // This result is recorded in history: secrets stay references, read back by the agent's activity.
    profiles[name] = { ...withSecretsOutOfHistory(profile, envSources[name] ?? source), sources };
    subagentDispatch[name] = profile.subagentDispatch;
    agentTimeoutMs[name] = profile.timeoutMs;
  }
  return { profiles, subagentDispatch, agentTimeoutMs };
}

/** Reads saga.config.yaml once; the result is recorded in history so replays never re-read it. */
async function loadRunSettings(input: {
  repo: string;
  sagaHome: string;
  configFile?: string;
  /** The user passed `--trust-repo-config` to saga start; without it the repository's config is held to
   * what cannot widen what runs (config-loader.ts). */
  trustRepoConfig?: boolean;
  /** `saga start --deliver`: pull requests for this saga even with `delivery: local` (a `forge:` needed). */
  deliver?: boolean;
  /** A saga from an issue (`saga start --from`, `saga watch`): its tracker is fixed with the settings. */
  intake?: TrackerRef;
  /** The saga budget set at start (SagaInput.budgetUsd), over the config's `budget.saga_usd`. */
  sagaUsd?: number;
}): Promise<RunSettings> {
  const { config, source, envSources, repoSource, repoWidening } = await loadSagaConfig(input);
  const sources = {
    user: input.configFile ? path.resolve(input.configFile) : null,
    repo: repoWidening.length > 0 ? repoSource : null,
  };
  const { profiles, subagentDispatch, agentTimeoutMs } = agentSettings(config, source, envSources, sources);
  const delivery = runDelivery(config, input.deliver === true);
  const intake = input.intake ? failStart(() => intakeSettings(config, input.intake!)) : undefined;
  return {
    attempts: config.attempts,
    checkTimeoutMs: checkTimeoutMs(config),
    heartbeatTimeoutMs: heartbeatTimeoutMs(config),
    defaultAgent: config.default_agent,
    profiles,
    subagentDispatch,
    agentTimeoutMs,
    worktree: {
      copy: config.worktree.copy,
      setup: config.worktree.setup,
      portRangeSize: config.worktree.port_range_size,
    },
    budget: {
      ...budgetSettings(config.budget),
      ...(input.sagaUsd !== undefined ? { sagaUsd: input.sagaUsd } : {}),
    },
    handoff: handoffSettings(config),
    passEnv: config.pass_env,
    sandbox: { mode: config.sandbox, network: config.network, sources },
    ...(delivery ? { delivery } : {}),
    ...(intake ? { intake } : {}),
  };
}

/** The delivery settings (absent: local); `--deliver` without a `forge:` fails the start, not each retry. */
function runDelivery(config: SagaConfig, deliver: boolean) {
  return failStart(() => deliverySettings(config, { deliver }));
}

/** A setting the config lacks fails the start once, naming the key, not each retry. */
function failStart<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw ApplicationFailure.nonRetryable((error as Error).message, 'InvalidSagaConfig');
  }
}

interface InitSagaDirInput {
  sagaDir: string;
  name: string;
  flags: FlagsResult;
  executionMode: string;
  parallelMode: string;
  degradations: { title: string; text: string }[];
}

/**
 * manifest.md with the flags and modes, plus one decisions.md entry per loud degradation (`execution_mode`
 * is exactly the mode value, e.g. `inline (subagents-unavailable)`; lanes go apart).
 */
async function initSagaDir(artifacts: Artifacts, input: InitSagaDirInput): Promise<void> {
  const { goal: _goal, error: _error, ...flags } = input.flags;
  await artifacts.updateManifest({
    sagaDir: input.sagaDir,
    patch: {
      saga: input.name,
      flags,
      execution_mode: input.executionMode,
      parallel_mode: input.parallelMode,
    },
  });
  for (const { title, text } of input.degradations) {
    await artifacts.prependDecision({
      sagaDir: input.sagaDir,
      entry: { at: new Date().toISOString(), title, lines: [text] },
    });
  }
}

export function createSagaSetupActivities(deps: { artifacts: Artifacts }) {
  const { artifacts } = deps;
  return {
    loadRunSettings,
    async initSagaDir(input: InitSagaDirInput): Promise<void> {
      return initSagaDir(artifacts, input);
    },

    /**
     * The autonomous planner's pre-flight context (planning-context.ts), after the answers the user gave
     * the saga are in decisions.md, so the planner sees them among the prior decisions.
     */
    async gatherPlanningContext(input: {
      repo: string;
      sagaDir: string;
      sagaWorkflowId: string;
    }): Promise<PlanningContext> {
      await recordSagaAnswers(artifacts, {
        client: Context.current().client,
        sagaDir: input.sagaDir,
        workflowId: input.sagaWorkflowId,
      });
      return planningContext(input.repo, input.sagaDir);
    },

    /** The audit trail of an auto-picked [A] Review: a manifest entry and a decisions.md entry. */
    async logAutoPick(input: AutoPickInput): Promise<void> {
      return logAutoPick(artifacts, input);
    },
  };
}
