/**
 * One agent process (any role) start to end: its prompt and report files and transcript under
 * `<sagaDir>/runs/<label>/`, heartbeats while it works, the outcome read from its output.
 * Only a small summary goes back into workflow history; everything big stays in those files.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import { processGroupRecord } from '../process/process';
import { privateHomeOf, runConfined } from '../sandbox';
import { cliConfigNetwork } from '../sandbox/cli-config-network';
import { endpointKey, uniqueEndpoints, type Endpoint } from '../../domain/config/sandbox';
import { failure } from '../../domain/agents/cli-output';
import { NetworkWatch } from '../sandbox/network-watch';
import {
  RunAgentInputSchema,
  type AgentMachine,
  type AgentRunHooks,
  type AgentRunInput,
  type RunAgentInput,
  type RunAgentResult,
} from './input';
import { AgentHeartbeat } from './agent-heartbeat';
import { resumeObstacle } from './resume';
import { notStarted, readRunResult, spawnFailure } from './run-outcome';
import {
  agentArgv,
  agentEnv,
  agentSandbox,
  AgentRunRecord,
  prepareRunFiles,
  promptFileOf,
  startTranscript,
  type RunFiles,
} from './run-setup';

/**
 * Runs one agent process start to end: prompt and report files, transcript, outcome read from its output.
 * With `resume`, the CLI's earlier session is continued; when it cannot be (see `resumeObstacle`, or the
 * CLI does not know the session), the run starts fresh and `resumeFallback` says why.
 */
export async function executeAgentRun(
  rawInput: RunAgentInput,
  machine: AgentMachine,
  hooks: AgentRunHooks,
): Promise<RunAgentResult> {
  const input = RunAgentInputSchema.parse(rawInput);
  const host = os.hostname();
  const asked = input.resume;
  let fallback = asked ? resumeObstacle(input, asked, host) : null;
  if (asked && !fallback) {
    const [resumed, unknown] = await runAgentOnce(input, machine, hooks, asked.sessionId, null);
    if (!unknown) return { ...resumed, resumeFallback: null };
    fallback = `${input.profile.name} does not know session ${asked.sessionId}`;
  }
  const [fresh] = await runAgentOnce(input, machine, hooks, null, fallback);
  return { ...fresh, resumeFallback: fallback };
}

/** One process: a fresh session, or `resumeId`'s. Also says whether the CLI refused an unknown session. */
async function runAgentOnce(
  input: AgentRunInput,
  machine: AgentMachine,
  hooks: AgentRunHooks,
  resumeId: string | null,
  fallback: string | null,
): Promise<[RunAgentResult, boolean]> {
  const profile = input.profile;
  const host = os.hostname();
  const files = await prepareRunFiles(input, resumeId);
  const record = new AgentRunRecord(files, {
    profile: profile.name,
    output: profile.output,
    host,
    activity: hooks.activity ?? null,
    resumedSession: resumeId,
    resumeFallback: fallback,
  });
  await record.write(resumeId);
  const argv = agentArgv(input, machine, files, resumeId);
  const transcriptStart = await startTranscript(input, hooks, files, resumeId, fallback);
  const live = new AgentHeartbeat(input, hooks, host, resumeId, (sessionId) => {
    void record.write(sessionId).catch(() => undefined);
  });
  live.beat();
  const env = await agentEnv(input, files);
  const configNetwork = await configNetworkOf(input, files, env);
  const sandbox = agentSandbox(input, machine, files, { argv, env, resumeId, configNetwork });
  const allowList = uniqueEndpoints(sandbox.network ?? []).map(endpointKey);
  const watch = new NetworkWatch({ profile: profile.name, allowList });
  const spawned = await runConfined(
    sandbox,
    {
      argv,
      cwd: input.workdir,
      env,
      outputPath: files.transcriptPath,
      timeoutMs: profile.timeoutMs,
      idleTimeoutMs: profile.idleTimeoutMs,
      signal: hooks.signal,
      onProgress: (progress) => live.beat(progress),
      onSpawn: async (pid) => fs.writeFile(files.pidPath, JSON.stringify(await processGroupRecord(pid))),
      stdinPath: profile.promptInput === 'stdin' ? promptFileOf(files, resumeId) : undefined,
      stopOnLine: (line) => live.readLine(line),
    },
    watch,
  ).catch((err: unknown) => spawnFailure(err, profile.name, argv[0]!));
  if (!('exitCode' in spawned)) {
    await fs.appendFile(files.transcriptPath, `${spawned.message}\n`);
    return [{ ...notStarted(spawned, files), host }, false];
  }
  await fs.rm(files.pidPath, { force: true });
  const sessionId = live.stream.snapshot().sessionId;
  const read = await readRunResult(input, spawned, files, transcriptStart, record, {
    sessionId,
    host,
    resumeId,
  });
  // A run that could not reach its model API fails for that reason, whatever the CLI made of it.
  const failed = spawned.exitCode !== 0 || spawned.timedOut || spawned.idle;
  const unreachable = spawned.stoppedBy ?? (failed ? watch.reason() : null);
  if (!unreachable) return read;
  await fs.appendFile(files.transcriptPath, `\n[saga sandbox] ${unreachable}\n`);
  return [{ ...read[0], failure: failure('network-unreachable', unreachable) }, read[1]];
}

/**
 * The endpoints the CLI's own config files name, allowed in its sandbox; one that cannot be allowed is
 * said in the transcript, where whoever reads why the run failed looks.
 */
async function configNetworkOf(
  input: AgentRunInput,
  files: RunFiles,
  env: Record<string, string>,
): Promise<Endpoint[]> {
  if (input.profile.sandbox === 'none') return [];
  const found = await cliConfigNetwork(
    privateHomeOf(input.sagaDir),
    input.profile.name,
    input.profile.command[0]!,
    env,
  );
  for (const entry of found.filter((e) => e.problem)) {
    await fs.appendFile(
      files.transcriptPath,
      `[saga sandbox] not allowed: ${entry.source} ${entry.url}: ${entry.problem}\n`,
    );
  }
  return found.flatMap((e) => (e.endpoint ? [e.endpoint] : []));
}
