/**
 * Finds and reads `saga.config.yaml`: an explicit file, else the repo's, else the saga home's, else defaults.
 * Per-machine placeholders (`{saga_root}`, `{node}`) of every profile are filled in here.
 */
import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../project-root';
import { CONFIG_SECRET_REFERENCE } from '../domain/config/agent-env';
import {
  BUILTIN_AGENTS,
  DEFAULT_SAGA_CONFIG,
  expandCommand,
  type AgentProfile,
  type SagaConfig,
} from '../domain/config/config';
import { resolveAgentProfile, type ResolvedAgentProfile } from '../domain/config/profile-resolution';
import { knownAgentNames } from '../domain/config/config';
import { parseSagaConfigText } from '../domain/config/config-text';

export const CONFIG_FILE_NAME = 'saga.config.yaml';

export interface LoadSagaConfigInput {
  repo: string;
  sagaHome: string;
  /** `--config FILE`: used instead of the search when given; it must exist. */
  configFile?: string;
}

export interface LoadedSagaConfig {
  config: SagaConfig;
  /** The file read, or null when the defaults apply. */
  source: string | null;
}

export interface MachinePaths {
  sagaRoot: string;
  nodePath: string;
}

/** The folder holding saga's own `agents/` and `templates/` (one definition: src/project-root.ts). */
export function findSagaRoot(): string {
  return PROJECT_ROOT;
}

export async function loadSagaConfig(
  input: LoadSagaConfigInput,
  machine: MachinePaths = { sagaRoot: findSagaRoot(), nodePath: process.execPath },
): Promise<LoadedSagaConfig> {
  const candidates = input.configFile
    ? [path.resolve(input.configFile)]
    : [path.join(input.repo, CONFIG_FILE_NAME), path.join(input.sagaHome, CONFIG_FILE_NAME)];
  for (const file of candidates) {
    const text = await readIfExists(file, Boolean(input.configFile));
    if (text === null) continue;
    const parsed = parseSagaConfigText(text, file);
    if (!parsed.ok) {
      throw ApplicationFailure.nonRetryable(
        `Invalid saga config ${file}:\n${parsed.errors.map((e) => `  - ${e}`).join('\n')}`,
        'InvalidSagaConfig',
      );
    }
    return { config: fillMachinePlaceholders(parsed.config, machine), source: file };
  }
  return { config: fillMachinePlaceholders(DEFAULT_SAGA_CONFIG, machine), source: null };
}

async function readIfExists(file: string, required: boolean): Promise<string | null> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !required) return null;
    const why = code === 'ENOENT' ? 'file not found' : (err as Error).message;
    throw ApplicationFailure.nonRetryable(`Cannot read saga config ${file}: ${why}`, 'InvalidSagaConfig');
  }
}

/** Every known profile (presets included) with `{saga_root}` and `{node}` resolved for this machine. */
function fillMachinePlaceholders(config: SagaConfig, machine: MachinePaths): SagaConfig {
  const agents: Record<string, AgentProfile> = {};
  for (const name of knownAgentNames(config)) {
    const merged: AgentProfile = { ...BUILTIN_AGENTS[name], ...config.agents[name] };
    if (merged.command) {
      merged.command = expandCommand(
        merged.command,
        { saga_root: machine.sagaRoot, node: machine.nodePath },
        { leaveMissing: true },
      );
    }
    agents[name] = merged;
  }
  return { ...config, agents };
}

/**
 * The profile with its secret-looking saga.config.yaml literals read back from the config file (in history
 * they are CONFIG_SECRET_REFERENCE). Runs in the activity that starts the agent, never in a workflow.
 */
export async function readBackConfigSecrets<P extends ResolvedAgentProfile>(profile: P): Promise<P> {
  const names = Object.keys(profile.env).filter((name) => profile.env[name] === CONFIG_SECRET_REFERENCE);
  if (names.length === 0) return profile;
  const file = profile.configFile;
  const gone = (what: string) =>
    ApplicationFailure.nonRetryable(
      `Agent profile '${profile.name}': ${what}. Restore it, or write the value as a \${VAR} reference ` +
        "to a variable of the worker's environment.",
      'InvalidSagaConfig',
    );
  if (!file) throw gone(`env ${names.join(', ')} came from a config file saga no longer knows`);
  const { config } = await loadSagaConfig({
    repo: path.dirname(file),
    sagaHome: path.dirname(file),
    configFile: file,
  });
  let current: Record<string, string>;
  try {
    current = resolveAgentProfile(config, profile.name).env;
  } catch {
    throw gone(`${file} no longer has this profile`);
  }
  const env = { ...profile.env };
  for (const name of names) {
    const value = current[name];
    if (value === undefined || value === CONFIG_SECRET_REFERENCE) {
      throw gone(`${file} no longer sets agents.${profile.name}.env.${name}`);
    }
    env[name] = value;
  }
  return { ...profile, env };
}
