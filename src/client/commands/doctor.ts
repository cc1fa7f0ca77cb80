/**
 * `saga doctor [--repo PATH] [--agent NAME [--probe]] [--json]`: can this machine run sagas? git, the
 * Temporal connection, the saga home, the repo and its config, and each agent profile it would use.
 * Exit 0 when nothing failed (warnings allowed), 2 otherwise.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { probeAgent, quickAgentChecks, versionCheck, type CheckResult } from '../../activities/agent-checks';
import { findSagaRoot, loadSagaConfig } from '../../activities/config-loader';
import { checkRepo } from '../../activities/git-ops';
import { detectSandbox } from '../../activities/sandbox';
import {
  DEFAULT_SAGA_CONFIG,
  knownAgentNames,
  resolveAgentProfile,
  type SagaConfig,
} from '../../domain/config/config';
import { defaultSagaHome } from '../../worker/host-settings';
import { bool, parseArgs, str } from '../args';
import { connectionSettings } from '../connection';
import { EXIT, UserError } from '../errors';
import type { Io } from './server';

const run = promisify(execFile);

export async function doctorCommand(argv: string[], io: Io, connect: () => Promise<Client>): Promise<number> {
  const args = parseArgs('doctor', argv);
  const agentName = str(args, 'agent');
  if (bool(args, 'probe') && !agentName)
    throw new UserError('saga doctor: --probe needs --agent NAME (it runs one small real task with it).');

  const results: CheckResult[] = [await gitCheck(), await serverCheck(connect), await sagaHomeCheck()];
  const repo = str(args, 'repo');
  let config: SagaConfig = DEFAULT_SAGA_CONFIG;
  if (repo) results.push(await repoCheck(path.resolve(repo)));
  try {
    const loaded = await loadSagaConfig({
      repo: repo ? path.resolve(repo) : process.cwd(),
      sagaHome: defaultSagaHome(),
      ...(str(args, 'config') ? { configFile: str(args, 'config') } : {}),
    });
    config = loaded.config;
    results.push({ name: 'config', level: 'ok', detail: loaded.source ?? 'no saga.config.yaml: defaults' });
  } catch (error) {
    results.push({ name: 'config', level: 'fail', detail: (error as Error).message });
  }

  results.push(await commandSandboxCheck(config));
  if (agentName && !knownAgentNames(config).includes(agentName))
    throw new UserError(
      `saga doctor: --agent ${agentName}: unknown agent profile. Known: ${knownAgentNames(config).join(', ')}.`,
    );
  const agents = agentName ? [agentName] : agentsInUse(config);
  for (const name of agents) {
    const profile = resolveAgentProfile(config, name);
    const quick = await quickAgentChecks(profile);
    results.push(...quick);
    if (quick.some((r) => r.level === 'fail')) continue;
    results.push(await versionCheck(profile));
    if (bool(args, 'probe')) {
      io.err(`Probing agent ${name}: one small real task in a scratch repository...`);
      results.push(
        ...(await probeAgent(
          profile,
          { nodePath: process.execPath, sagaRoot: findSagaRoot() },
          {
            keepDir: path.join(defaultSagaHome(), '.doctor'),
          },
        )),
      );
    }
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

/** The default agent and every profile the config declares. */
function agentsInUse(config: SagaConfig): string[] {
  return [...new Set([config.default_agent, ...Object.keys(config.agents)])];
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
    await fs.mkdir(home, { recursive: true });
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
