/**
 * The worker's own reading of the config, held against a workflow's input: what an agent runs and how a
 * command is confined come from the config files on this worker, never from the input's word.
 */
import { ApplicationFailure } from '@temporalio/common';
import path from 'node:path';
import { withSecretsOutOfHistory } from '../domain/config/agent-env';
import { expandCommand, type SagaConfig } from '../domain/config/config';
import { resolveAgentProfile, type ResolvedAgentProfile } from '../domain/config/profile-resolution';
import type { CommandSandbox } from '../domain/config/sandbox';
import { CONFIG_FILE_NAME, findSagaRoot, loadSagaConfig, type MachinePaths } from './config-loader';
import { SandboxUnavailableError } from './sandbox/detect';

/** A profile's fields that decide what runs and what it reaches. */
const RUN_FIELDS = ['command', 'resumeCommand', 'sandbox', 'network', 'passEnv', 'env'] as const;

/**
 * Refuses a profile that is not what the config files it names say on this worker: what runs and what it
 * reaches come from the worker's own reading of the user's config (and the repository's, when the user
 * trusted it), never from a workflow's input. Runs in the activity that starts the agent.
 */
export async function verifyAgentProfile(
  profile: ResolvedAgentProfile,
  sagaHome: string,
  machine: MachinePaths = { sagaRoot: findSagaRoot(), nodePath: process.execPath },
): Promise<void> {
  const sources = profile.sources ?? { user: profile.configFile, repo: null };
  const refuse = (why: string) =>
    ApplicationFailure.nonRetryable(
      `Agent profile '${profile.name}': ${why}; refused (what an agent runs comes from this worker's ` +
        'reading of the config files, not from the workflow input).',
      'UntrustedAgentProfile',
    );
  let config: SagaConfig;
  try {
    config = await loadFromSources(sources, sagaHome, machine);
  } catch (error) {
    throw refuse(`cannot read the config it came from: ${(error as Error).message}`);
  }
  const files = sourceFiles(sources, sagaHome);
  let expected: ResolvedAgentProfile;
  try {
    expected = withSecretsOutOfHistory(resolveAgentProfile(config, profile.name), null);
  } catch {
    throw refuse(`${files} has no such profile`);
  }
  const filled = (argv: readonly string[] | null) =>
    argv &&
    expandCommand(argv, { saga_root: machine.sagaRoot, node: machine.nodePath }, { leaveMissing: true });
  const comparable = (p: ResolvedAgentProfile, field: (typeof RUN_FIELDS)[number]): unknown =>
    field === 'command' || field === 'resumeCommand'
      ? filled(p[field])
      : field === 'env'
        ? Object.entries(p.env).sort(([a], [b]) => a.localeCompare(b))
        : p[field];
  const differing = RUN_FIELDS.filter(
    (field) =>
      // No resume command (older histories, `resume: false`) only narrows what runs.
      !(field === 'resumeCommand' && profile.resumeCommand === null) &&
      JSON.stringify(comparable(profile, field)) !== JSON.stringify(comparable(expected, field)),
  );
  if (differing.length > 0) throw refuse(`its ${differing.join(', ')} differ from what ${files} say`);
}

type ConfigSources = { user: string | null; repo: string | null };

const sourceFiles = (sources: ConfigSources, sagaHome: string) =>
  [sources.user ?? path.join(sagaHome, CONFIG_FILE_NAME), sources.repo].filter(Boolean).join(', ');

/** The config as the user's file (and a trusted repository's) say it now, read by this worker. */
async function loadFromSources(
  sources: ConfigSources,
  sagaHome: string,
  machine?: MachinePaths,
): Promise<SagaConfig> {
  const { config } = await loadSagaConfig(
    {
      repo: sources.repo ? path.dirname(sources.repo) : sagaHome,
      sagaHome,
      ...(sources.user ? { configFile: sources.user } : {}),
      ...(sources.repo ? { trustRepoConfig: true } : { userOnly: true }),
    },
    machine,
  );
  return config;
}

/**
 * Refuses a check, set-up or discovery command's sandbox that is wider (unconfined, or with network) than
 * the config files it came from say on this worker. The narrowest sandbox needs no reading.
 */
export async function verifyCommandSandbox(settings: CommandSandbox, sagaHome: string): Promise<void> {
  if (settings.mode === 'auto' && settings.network.length === 0) return;
  const sources = settings.sources ?? { user: null, repo: null };
  const config = await loadFromSources(sources, sagaHome).catch((error: Error) => {
    throw new SandboxUnavailableError(`cannot read the config its sandbox came from: ${error.message}`);
  });
  const wider = [
    ...(settings.mode === 'none' && config.sandbox !== 'none' ? ['sandbox: none'] : []),
    ...settings.network.filter((entry) => !config.network.includes(entry)).map((e) => `network ${e}`),
  ];
  if (wider.length > 0) {
    throw new SandboxUnavailableError(
      `its ${wider.join(', ')} is not what ${sourceFiles(sources, sagaHome)} say on this worker; refused ` +
        '(how commands are confined comes from the config files, not from the workflow input)',
    );
  }
}
