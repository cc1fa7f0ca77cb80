/**
 * `saga doctor [--repo PATH] [--agent NAME [--probe]] [--json]`: can this machine run sagas? git, the
 * Temporal connection, the saga home, the repo and its config, the forge it names (doctor-forge.ts), the
 * trackers it names (doctor-tracker.ts), and
 * each agent profile it would use; the
 * other presets are listed as optional. Exit 0 when nothing checked failed (warnings allowed), 2 otherwise.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { probeAgent, quickAgentChecks, versionCheck, type CheckResult } from '../../activities/agents/checks';
import { findProgram } from '../../activities/process/on-path';
import { makePrivateDir } from '../../activities/artifacts/file-io';
import { findSagaRoot, loadSagaConfig } from '../../activities/config-loader';
import { checkRepo } from '../../activities/git-ops';
import { detectSandbox } from '../../activities/sandbox';
import { DEFAULT_SAGA_CONFIG, type SagaConfig } from '../../domain/config/config';
import { type ResolvedAgentProfile, resolveAgentProfile } from '../../domain/config/profile-resolution';
import { knownAgentNames } from '../../domain/config/config';
import { parseSagaConfigText } from '../../domain/config/config-text';
import { defaultSagaHome } from '../../worker/host-settings';
import { forgeChecks } from './doctor-forge';
import { trackerChecks } from './doctor-tracker';
import { bool, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { connectionSettings } from '../connection';
import { EXIT, UserError } from '../errors';
import type { Io } from '../io';

const run = promisify(execFile);

export async function doctorCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const agentName = str(args, 'agent');
  if (bool(args, 'probe') && !agentName)
    throw new UserError('saga doctor: --probe needs --agent NAME (it runs one small real task with it).');

  const results: CheckResult[] = [await gitCheck(), await serverCheck(connect), await sagaHomeCheck()];
  const repo = str(args, 'repo');
  if (repo) results.push(await repoCheck(path.resolve(repo)));
  const { config, inUse, check, repoWidening } = await configCheck(repo, str(args, 'config'));
  results.push(check, await commandSandboxCheck(config));
  if (config.forge)
    results.push(...(await forgeChecks(config.forge, repo ? path.resolve(repo) : undefined, repoWidening)));
  results.push(...(await trackerChecks(config, repoWidening)));
  if (agentName && !knownAgentNames(config).includes(agentName))
    throw new UserError(
      `saga doctor: --agent ${agentName}: unknown agent profile. Known: ${knownAgentNames(config).join(', ')}.`,
    );
  const agents = agentName ? [agentName] : inUse;
  for (const name of agents) {
    results.push(...(await agentChecks(resolveAgentProfile(config, name), bool(args, 'probe'), io)));
  }
  if (!agentName) {
    const optional = knownAgentNames(config).filter((name) => !agents.includes(name));
    for (const name of optional) results.push(await optionalAgentCheck(resolveAgentProfile(config, name)));
  }

  if (bool(args, 'json'))
    io.out(JSON.stringify({ ok: results.every((r) => r.level !== 'fail'), checks: results }, null, 2));
  else for (const r of results) io.out(`${r.level.toUpperCase().padEnd(4)}  ${r.name}: ${r.detail}`);
  return results.some((r) => r.level === 'fail') ? EXIT.environment : EXIT.ok;
}

/** How checks and set-up commands run (agents have their own line each). */
async function commandSandboxCheck(config: SagaConfig): Promise<CheckResult> {
  const name = 'sandbox (checks, set-up)';
  if (config.sandbox === 'none') {
    return {
      name,
      level: 'warn',
      detail: 'UNCONFINED (sandbox: none): checks and set-up commands run as your user',
    };
  }
  try {
    const tool = await detectSandbox();
    const socat = tool.socat ? `socat ${tool.socat}` : 'no socat (no endpoint can be allowed)';
    const reach = config.network.length ? config.network.join(', ') : 'nothing';
    return {
      name,
      level: 'ok',
      detail: `bubblewrap ${tool.version} (${tool.path}), ${socat}; network only to ${reach}`,
    };
  } catch (error) {
    return { name, level: 'fail', detail: (error as Error).message };
  }
}

/** The config (the saga home's or `--config`, the repo's over it) and the agents it uses. */
async function configCheck(
  repo: string | undefined,
  configFile: string | undefined,
): Promise<{ config: SagaConfig; inUse: string[]; check: CheckResult; repoWidening: string[] }> {
  try {
    const loaded = await loadSagaConfig({
      repo: repo ? path.resolve(repo) : process.cwd(),
      sagaHome: defaultSagaHome(),
      ...(configFile ? { configFile } : {}),
      // Diagnosis: the agents the repository's settings name are checked too; start refuses them (below).
      trustRepoConfig: true,
    });
    const files = [loaded.source, loaded.repoSource].filter((f): f is string => f !== null);
    const declared = (await Promise.all(files.map(declaredAgents))).flat();
    const detail = files.join(' with ') || 'no saga.config.yaml: defaults';
    return {
      config: loaded.config,
      inUse: [...new Set([loaded.config.default_agent, ...declared])],
      repoWidening: loaded.repoWidening,
      check: loaded.repoWidening.length
        ? {
            name: 'config',
            level: 'warn',
            detail:
              `${detail}; saga start refuses the repository's ${loaded.repoWidening.map((s) => s.replace(/: .*$/, '')).join(', ')} ` +
              `unless given --trust-repo-config (or moved into ${path.join(defaultSagaHome(), 'saga.config.yaml')})`,
          }
        : { name: 'config', level: 'ok', detail },
    };
  } catch (error) {
    return {
      config: DEFAULT_SAGA_CONFIG,
      inUse: [DEFAULT_SAGA_CONFIG.default_agent],
      repoWidening: [],
      check: { name: 'config', level: 'fail', detail: (error as Error).message },
    };
  }
}

/**
 * The profiles the config file itself declares under `agents:` (the loaded config also holds every preset,
 * which the user did not ask for).
 */
async function declaredAgents(file: string): Promise<string[]> {
  const parsed = parseSagaConfigText(await fs.readFile(file, 'utf8'), file);
  return parsed.ok ? Object.keys(parsed.config.agents) : [];
}

/** An agent the config uses: installed, credentials, sandbox, version, and with `--probe` one real task. */
async function agentChecks(profile: ResolvedAgentProfile, probe: boolean, io: Io): Promise<CheckResult[]> {
  const results = await quickAgentChecks(profile);
  if (results.some((r) => r.level === 'fail')) return results;
  results.push(await versionCheck(profile));
  if (probe) {
    io.err(`Probing agent ${profile.name}: one small real task in a scratch repository...`);
    const where = { nodePath: process.execPath, sagaRoot: findSagaRoot() };
    results.push(...(await probeAgent(profile, where, { keepDir: path.join(defaultSagaHome(), '.doctor') })));
  }
  return results;
}

/** A preset the config does not use: only whether its CLI is there; never a failure. */
async function optionalAgentCheck(profile: ResolvedAgentProfile): Promise<CheckResult> {
  const program = profile.command[0]!;
  const found = findProgram(program, profile.env.PATH ?? process.env.PATH);
  return {
    name: `agent ${profile.name}`,
    level: 'ok',
    detail: found ? `${program} found at ${found} (optional)` : `'${program}' not installed (optional)`,
  };
}

async function gitCheck(): Promise<CheckResult> {
  try {
    const { stdout } = await run('git', ['--version'], { timeout: 10_000 });
    return { name: 'git', level: 'ok', detail: stdout.trim() };
  } catch (error) {
    return {
      name: 'git',
      level: 'fail',
      detail: `git does not run: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}

async function serverCheck(connect: () => Promise<Client>): Promise<CheckResult> {
  const { address, namespace } = connectionSettings();
  try {
    const client = await connect();
    await client.workflowService.describeNamespace({ namespace });
    return { name: 'temporal', level: 'ok', detail: `${address}, namespace ${namespace}` };
  } catch (error) {
    return { name: 'temporal', level: 'fail', detail: (error as Error).message.split('\n')[0]! };
  }
}

async function sagaHomeCheck(): Promise<CheckResult> {
  const home = defaultSagaHome();
  try {
    await makePrivateDir(home);
    const probe = path.join(home, `.doctor-${process.pid}`);
    await fs.writeFile(probe, 'ok');
    await fs.rm(probe);
    return { name: 'saga home', level: 'ok', detail: `${home} (writable)` };
  } catch (error) {
    return { name: 'saga home', level: 'fail', detail: `${home}: ${(error as Error).message}` };
  }
}

async function repoCheck(repo: string): Promise<CheckResult> {
  try {
    const info = await checkRepo({ repo });
    return {
      name: 'repo',
      level: info.clean ? 'ok' : 'warn',
      detail: `${info.repo} on ${info.base}${info.clean ? '' : ` — uncommitted changes (${info.dirtyFiles.slice(0, 3).join(', ')})`}`,
    };
  } catch (error) {
    return { name: 'repo', level: 'fail', detail: `${repo}: ${(error as Error).message}` };
  }
}
