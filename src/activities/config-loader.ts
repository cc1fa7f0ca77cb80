/**
 * Finds and reads `saga.config.yaml`: the user's (an explicit file, else the saga home's, else defaults)
 * with the repository's over it, within what a repository may set (domain/config/trust.ts).
 * Per-machine placeholders (`{saga_root}`, `{node}`) of every profile are filled in here.
 */
import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../project-root';
import { CONFIG_SECRET_REFERENCE } from '../domain/config/agent-env';
import { BUILTIN_AGENTS, expandCommand, type AgentProfile, type SagaConfig } from '../domain/config/config';
import { resolveAgentProfile, type ResolvedAgentProfile } from '../domain/config/profile-resolution';
import { knownAgentNames } from '../domain/config/config';
import { parseSagaConfigText } from '../domain/config/config-text';
import { SagaConfigSchema } from '../domain/config/config';
import {
  mergeConfigObjects,
  profileHomeProblems,
  repoSettingRisk,
  repoWideningSettings,
  reservedEndpoints,
  reservedRouteProblems,
} from '../domain/config/trust';
import { parseDocument } from 'yaml';

export const CONFIG_FILE_NAME = 'saga.config.yaml';

export interface LoadSagaConfigInput {
  repo: string;
  sagaHome: string;
  /** `--config FILE`: the user's file, used instead of the saga home's when given; it must exist. */
  configFile?: string;
  /** `saga start --trust-repo-config`: the repository's file may also set what widens what runs. */
  trustRepoConfig?: boolean;
  /** Only the user's file (re-reading the file a profile came from), no repository's over it. */
  userOnly?: boolean;
  /** Told the trusted repository settings that widen what runs, before anything else is checked. */
  onRepoWidening?: (file: string, settings: readonly string[]) => void;
}

export interface LoadedSagaConfig {
  config: SagaConfig;
  /** The user's file read (`--config` or the saga home's), or null when there is none. */
  source: string | null;
  /** The repository's saga.config.yaml when it was merged in, else null. */
  repoSource: string | null;
  /** Settings of the repository's file that widen what runs or reaches (`key: value`); only when trusted. */
  repoWidening: string[];
  /** The file each profile's `env` literals are read back from (the repository's when it sets them). */
  envSources: Record<string, string | null>;
}

export interface MachinePaths {
  sagaRoot: string;
  nodePath: string;
}

/** The folder holding saga's own `agents/` and `templates/` (one definition: src/project-root.ts). */
export function findSagaRoot(): string {
  return PROJECT_ROOT;
}

const invalid = (file: string, errors: readonly string[]) =>
  ApplicationFailure.nonRetryable(
    `Invalid saga config ${file}:\n${errors.map((e) => `  - ${e}`).join('\n')}`,
    'InvalidSagaConfig',
  );

/**
 * The user's config (`--config FILE`, else `$SAGA_HOME/saga.config.yaml`, else the defaults) with the
 * repository's `saga.config.yaml` over it. The repository's file is content of the repository (a clone, or
 * what an agent committed): it may set only what cannot widen what runs or what it reaches, unless the user
 * trusts it. Whatever file says so, a profile HOME over the host's home, saga home or repository and a
 * route to saga's own services are refused.
 */
export async function loadSagaConfig(
  input: LoadSagaConfigInput,
  machine: MachinePaths = { sagaRoot: findSagaRoot(), nodePath: process.execPath },
): Promise<LoadedSagaConfig> {
  const userFile = input.configFile
    ? path.resolve(input.configFile)
    : path.join(input.sagaHome, CONFIG_FILE_NAME);
  const userText = await readIfExists(userFile, Boolean(input.configFile));
  const userRaw = userText === null ? {} : parseYamlOrFail(userText, userFile);
  const user = parseSagaConfigText(userText ?? '', userFile);
  if (!user.ok) throw invalid(userFile, user.errors);

  const repoFile = path.join(input.repo, CONFIG_FILE_NAME);
  // `--config` inside the repository is still the user's own choice of file.
  const repoText = input.userOnly || repoFile === userFile ? null : await readIfExists(repoFile, false);
  let config = user.config;
  let repoWidening: string[] = [];
  const envSources: Record<string, string | null> = {};
  if (repoText !== null) {
    const repoRaw = parseYamlOrFail(repoText, repoFile);
    const repoAgents = (repoRaw as { agents?: Record<string, { env?: unknown } | null> } | null)?.agents;
    for (const [name, profile] of Object.entries(repoAgents ?? {})) {
      if (profile?.env) envSources[name] = repoFile;
    }
    const merged = SagaConfigSchema.safeParse(mergeConfigObjects(userRaw, repoRaw));
    if (!merged.success) {
      const again = parseSagaConfigText(JSON.stringify(mergeConfigObjects(userRaw, repoRaw)), repoFile);
      throw invalid(repoFile, again.ok ? [merged.error.message] : again.errors);
    }
    repoWidening = repoWideningSettings(repoRaw, user.config);
    if (repoWidening.length > 0 && !input.trustRepoConfig) {
      throw ApplicationFailure.nonRetryable(
        untrustedMessage(repoFile, repoWidening, input.sagaHome),
        'UntrustedRepoConfig',
      );
    }
    if (repoWidening.length > 0) input.onRepoWidening?.(repoFile, repoWidening);
    config = merged.data;
  }
  const problems = [
    ...profileHomeProblems(config, {
      userHome: os.homedir(),
      sagaHomes: [input.sagaHome, ...(process.env.SAGA_HOME ? [process.env.SAGA_HOME] : [])],
      repos: [input.repo],
    }),
    ...reservedRouteProblems(config, reservedEndpoints(process.env)),
  ];
  if (problems.length > 0) {
    const files = [userText !== null ? userFile : null, repoText !== null ? repoFile : null].filter(Boolean);
    throw ApplicationFailure.nonRetryable(
      `Refused saga config (${files.join(', ')}):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
      'InvalidSagaConfig',
    );
  }
  return {
    config: fillMachinePlaceholders(config, machine),
    source: userText === null ? null : userFile,
    repoSource: repoText === null ? null : repoFile,
    repoWidening,
    envSources,
  };
}

/** The refusal of a repository's config that widens what runs: each setting named, and the ways out. */
function untrustedMessage(repoFile: string, settings: readonly string[], sagaHome: string): string {
  return (
    `${repoFile} sets what saga runs or what it reaches, and a repository's config is not trusted for that:\n` +
    settings
      .map((s) => {
        const key = s.replace(/: .*$/, '');
        const risk = repoSettingRisk(key);
        return `  - ${CONFIG_FILE_NAME}: ${key}: set by the repository${risk ? ` (${risk})` : ''}`;
      })
      .join('\n') +
    `\nMove these settings into your own ${path.join(sagaHome, CONFIG_FILE_NAME)} (or a file you pass with ` +
    '--config), or, if you trust this repository, pass --trust-repo-config to saga start.'
  );
}

/** YAML's mapping, or a refusal naming the file (the schema's messages come from parseSagaConfigText). */
function parseYamlOrFail(text: string, file: string): unknown {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    const parsed = parseSagaConfigText(text, file);
    throw invalid(file, parsed.ok ? [doc.errors[0]!.message] : parsed.errors);
  }
  return doc.toJS() ?? {};
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
    userOnly: true,
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
