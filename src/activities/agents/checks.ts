/**
 * Can this machine run an agent profile? The checks behind `saga doctor` and the refusal of `saga start`:
 * the program is on PATH, its version is one the preset was verified with (a warning otherwise), its
 * credentials are present; and, on request, a probe: one tiny real task in a scratch git worktree that must
 * edit a file and run a command.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolveEnvReferences } from '../../domain/config/agent-env';
import { AGENT_PRESETS } from '../../domain/config/agent-presets';
import type { ResolvedAgentProfile } from '../../domain/config/profile-resolution';
import { stderrSuffix } from '../../domain/text/process-end';
import { endpointKey, endpointsFromEnv, parseEndpoint, uniqueEndpoints } from '../../domain/config/sandbox';
import type { ConfigEndpoint } from '../../domain/config/cli-config-endpoints';
import { findProgram } from '../process/on-path';
import { detectSandbox } from '../sandbox';
import { readCliConfigEndpoints } from '../sandbox/cli-config-network';
import { executeAgentRun, type AgentMachine } from './';

const run = promisify(execFile);

export type CheckLevel = 'ok' | 'warn' | 'fail';
export interface CheckResult {
  name: string;
  level: CheckLevel;
  detail: string;
}

/** The cheap checks (no process started): installed, and credentials present. */
export async function quickAgentChecks(
  profile: ResolvedAgentProfile,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CheckResult[]> {
  const program = profile.command[0]!;
  const name = `agent ${profile.name}`;
  const found = findProgram(program, profile.env.PATH ?? env.PATH);
  const preset = AGENT_PRESETS[profile.name]?.cli;
  const sameProgram = preset && path.basename(program) === preset.program;
  if (!found) {
    const hint = sameProgram ? ` Install it: ${preset.install}` : '';
    return [{ name, level: 'fail', detail: `'${program}' is not installed or not on PATH.${hint}` }];
  }
  const results: CheckResult[] = [{ name, level: 'ok', detail: `${program} found at ${found}` }];
  if (sameProgram) results.push(await credentialCheck(profile, preset, env));
  results.push(await agentSandboxCheck(profile, env));
  return results;
}

/**
 * Whether the profile's agent runs confined here, and what it can reach from there; a profile
 * that would run unconfined says so loudly (a warning, as the config asked for it).
 */
export async function agentSandboxCheck(
  profile: ResolvedAgentProfile,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CheckResult> {
  const name = `agent ${profile.name} sandbox`;
  if (profile.sandbox === 'none') {
    return {
      name,
      level: 'warn',
      detail:
        'UNCONFINED (sandbox: none): the agent runs as your user and can read your files, other processes, ' +
        'and reach the Temporal server and the network',
    };
  }
  try {
    const tool = await detectSandbox();
    const resolved = resolvedEnvOf(profile, env);
    const reach = uniqueEndpoints([...profile.network.map(parseEndpoint), ...endpointsFromEnv(resolved)]);
    const fromConfig = await readCliConfigEndpoints(profile.command[0]!, { ...env, ...resolved });
    const problems = fromConfig.filter((e) => e.problem);
    return {
      name,
      level: problems.length > 0 ? 'warn' : 'ok',
      detail:
        `confined by bubblewrap ${tool.version}: its worktree writable, the repository read-only, no saga ` +
        `home, no other process; network only to ${reach.map(endpointKey).join(', ') || 'nothing'}` +
        configNetworkText(fromConfig),
    };
  } catch (error) {
    return { name, level: 'fail', detail: (error as Error).message };
  }
}

/** The endpoints the CLI's own config files add (and those they name that cannot be allowed). */
function configNetworkText(found: readonly ConfigEndpoint[]): string {
  const allowed = found.flatMap((e) => (e.endpoint ? [`${endpointKey(e.endpoint)} (${e.source})`] : []));
  const refused = found.flatMap((e) => (e.problem ? [`${e.source} ${e.url}: ${e.problem}`] : []));
  return (
    (allowed.length ? `; from its own config: ${allowed.join(', ')}` : '') +
    (refused.length ? `; NOT allowed from its own config: ${refused.join('; ')}` : '')
  );
}

/** The profile's env entries that resolve from `env` (a missing reference is another check's finding). */
function resolvedEnvOf(profile: ResolvedAgentProfile, env: NodeJS.ProcessEnv): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [key, value] of Object.entries(profile.env)) {
    try {
      Object.assign(resolved, resolveEnvReferences({ [key]: value }, env, `agent ${profile.name}`));
    } catch {
      // reported by credentialCheck
    }
  }
  return resolved;
}

async function credentialCheck(
  profile: ResolvedAgentProfile,
  preset: NonNullable<(typeof AGENT_PRESETS)[string]['cli']>,
  env: NodeJS.ProcessEnv,
): Promise<CheckResult> {
  const name = `agent ${profile.name} credentials`;
  // A `${VAR}` reference counts only when the worker's environment has VAR.
  const merged = { ...env, ...resolvedEnvOf(profile, env) };
  const variable = preset.credentialEnv.find((v) => merged[v]);
  if (variable) return { name, level: 'ok', detail: `${variable} is set` };
  const home = merged.HOME ?? os.homedir();
  for (const file of preset.loginFiles) {
    if (await fs.stat(path.join(home, file)).catch(() => null))
      return { name, level: 'ok', detail: `~/${file} is there` };
  }
  return {
    name,
    // opencode and aider may read a key from their own config or from a variable named there.
    level: preset.credentialsAdvisory ? 'warn' : 'fail',
    detail:
      `none of ${preset.credentialEnv.join(', ')} is set and no login was found` +
      (preset.loginFiles.length ? ` (~/${preset.loginFiles.join(', ~/')})` : '') +
      `; set a key or log in with '${preset.program}'`,
  };
}

/** `PROGRAM --version`, compared with the versions the preset was verified with. */
export async function versionCheck(profile: ResolvedAgentProfile, env = process.env): Promise<CheckResult> {
  const preset = AGENT_PRESETS[profile.name]?.cli;
  const program = profile.command[0]!;
  const name = `agent ${profile.name} version`;
  if (!preset || path.basename(program) !== preset.program)
    return { name, level: 'ok', detail: 'custom command: no verified version to compare' };
  try {
    const { stdout } = await run(program, preset.versionArgs, {
      timeout: 60_000,
      env: { ...env, ...profile.env },
    });
    const version = /\d+\.\d+\.\d+/.exec(stdout)?.[0] ?? stdout.trim().split('\n')[0] ?? '';
    return preset.verifiedVersions.includes(version)
      ? { name, level: 'ok', detail: `${version} (verified)` }
      : {
          name,
          level: 'warn',
          detail: `${version || 'unknown'}; the preset was verified with ${preset.verifiedVersions.join(', ')} — flags may have changed`,
        };
  } catch (error) {
    return {
      name,
      level: 'warn',
      detail: `'${program} ${preset.versionArgs.join(' ')}' failed: ${(error as Error).message.split('\n')[0]}`,
    };
  }
}

const PROBE_PROMPT = [
  'This is a short check that you can work here. Do exactly two things, then stop:',
  '1. Create the file saga-probe.txt in the current directory containing the single line: ok',
  `2. Run this shell command: node -e "require('fs').writeFileSync('saga-probe-ran.txt', 'ran')"`,
  'Do not do anything else.',
].join('\n');

/**
 * One tiny real task in a scratch repository: did the agent edit a file, and did it run a command?
 * The scratch folder is removed afterwards; the transcript is kept when `keepDir` is given.
 */
export async function probeAgent(
  profile: ResolvedAgentProfile,
  machine: AgentMachine,
  opts: { keepDir?: string; timeoutMs?: number } = {},
): Promise<CheckResult[]> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-probe-'));
  const repo = path.join(scratch, 'repo');
  const worktree = path.join(scratch, 'worktree');
  const sagaDir = opts.keepDir ?? path.join(scratch, 'saga');
  try {
    await fs.mkdir(repo);
    const git = (cwd: string, ...args: string[]) => run('git', args, { cwd });
    await git(repo, 'init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'README.md'), '# probe\n');
    await git(repo, 'add', '-A');
    await git(repo, '-c', 'user.name=saga', '-c', 'user.email=saga@localhost', 'commit', '-q', '-m', 'probe');
    await git(repo, 'worktree', 'add', '-q', '-b', 'saga-probe', worktree);
    const timeoutMs = opts.timeoutMs ?? 5 * 60_000;
    const result = await executeAgentRun(
      {
        sagaName: 'doctor',
        sagaDir,
        role: 'implementer',
        stage: 'probe',
        taskId: 'probe',
        attempt: 1,
        profile: { ...profile, timeoutMs, idleTimeoutMs: Math.min(profile.idleTimeoutMs, timeoutMs) },
        prompt: PROBE_PROMPT,
        workdir: worktree,
        runLabel: `probe-${profile.name}`,
      },
      machine,
      { heartbeat: () => undefined, signal: new AbortController().signal, label: 'saga doctor --probe' },
    );
    const edited = await fs.readFile(path.join(worktree, 'saga-probe.txt'), 'utf8').catch(() => null);
    const ran = await fs.stat(path.join(worktree, 'saga-probe-ran.txt')).catch(() => null);
    const name = `agent ${profile.name} probe`;
    const where = opts.keepDir ? ` (transcript: ${result.transcriptPath})` : '';
    const usage = result.usage
      ? `; ${result.usage.inputTokens} in / ${result.usage.outputTokens} out tokens`
      : '';
    const checks: CheckResult[] = [
      edited?.trim() === 'ok'
        ? { name: `${name}: edit a file`, level: 'ok', detail: `saga-probe.txt written${usage}` }
        : { name: `${name}: edit a file`, level: 'fail', detail: `saga-probe.txt was not written${where}` },
      ran
        ? { name: `${name}: run a command`, level: 'ok', detail: 'saga-probe-ran.txt created by node -e' }
        : { name: `${name}: run a command`, level: 'fail', detail: `the command did not run${where}` },
    ];
    if (result.failure)
      checks.push({ name, level: 'fail', detail: `${result.failure.message}${stderrSuffix(result)}` });
    else if (result.exitCode !== 0)
      checks.push({
        name,
        level: 'fail',
        detail: `exited with ${result.timedOut ? 'a timeout' : (result.exitCode ?? result.signal)}${stderrSuffix(result)}${where}`,
      });
    return checks;
  } finally {
    await run('git', ['worktree', 'remove', '--force', worktree], { cwd: repo }).catch(() => undefined);
    await fs.rm(scratch, { recursive: true, force: true });
  }
}
