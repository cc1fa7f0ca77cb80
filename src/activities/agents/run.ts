/**
 * One agent process (any role, DESIGN.md 4.4 and 4.6) start to end: its prompt and report files and
 * transcript under `<sagaDir>/runs/<label>/`, heartbeats while it works, the outcome read from its output.
 * Only a small summary goes back into workflow history; everything big stays in those files.
 */
import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  hopelessRetry,
  notInstalledFailure,
  readableLine,
  readAgentOutcome,
  unknownSession,
  type AgentFailure,
} from '../../domain/agents/cli-output';
import { agentEnvironment, EnvReferenceError } from '../../domain/config/agent-env';
import { extractReport, parseUsage } from '../../domain/agents/agent-output';
import {
  AGENT_EVENTS_FILE,
  AGENT_PRESETS,
  AGENT_RUN_FILE,
  budgetArgsFor,
  commandInsideSandbox,
} from '../../domain/config/agent-presets';
import { endpointsFromEnv, parseEndpoint } from '../../domain/config/sandbox';
import { createAgentStreamReader } from '../../domain/agents/agent-stream';
import { expandCommand } from '../../domain/config/config';
import { readBackConfigSecrets } from '../config-loader';
import { processGroupRecord, runDirectory, SpawnError, type ProcessProgress } from '../process';
import { runConfined, SandboxUnavailableError, type SandboxRequest } from '../sandbox';
import {
  RunAgentInputSchema,
  type AgentMachine,
  type AgentProgress,
  type AgentRunHooks,
  type AgentRunInput,
  type RunAgentInput,
  type RunAgentResult,
} from './input';
import { composePrompt, composeResumePrompt } from './prompt';
import { resumeObstacle } from './resume';
import { endLeftover, readHead, readTail, writeAtomic } from './run-files';

/** Linux caps one argv element at 128 KiB; a longer prompt is passed by file reference. */
const PROMPT_ARG_MAX = 100_000;
const REPORT_READ_MAX = 1024 * 1024;
const REPORT_KEEP_MAX = 64 * 1024;
const STDOUT_SCAN_MAX = 256 * 1024;
const FINDINGS_MAX = 16 * 1024;

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
  const runDir = runDirectory(input.sagaDir, input.runLabel);
  await fs.mkdir(runDir, { recursive: true });
  const promptPath = path.join(runDir, 'prompt.md');
  const reportPath = path.join(runDir, 'report.json');
  const transcriptPath = path.join(runDir, 'transcript.log');
  const pidPath = path.join(runDir, 'agent.pid');
  // A retry after a worker crash: the crashed try's agent may still run in this worktree; end it first.
  await endLeftover(pidPath);

  const fullPrompt = await composePrompt(input, reportPath);
  await fs.writeFile(promptPath, fullPrompt);
  // A resumed session already holds the task: it gets only what is new (failure notes, or "go on").
  const resumePromptPath = path.join(runDir, 'resume-prompt.md');
  const promptText = resumeId ? await composeResumePrompt(input, reportPath, promptPath) : fullPrompt;
  if (resumeId) await fs.writeFile(resumePromptPath, promptText);
  await fs.writeFile(reportPath, ''); // an answer left by an earlier try must not count
  // How to read the transcript (`saga logs` renders JSON streams as readable lines), and the CLI's session
  // as soon as it is known: a try that dies mid-run leaves it for the retry to resume.
  const runFile = path.join(runDir, AGENT_RUN_FILE);
  let output = profile.output;
  const recordRun = (sessionId: string | null) =>
    writeAtomic(
      runFile,
      JSON.stringify({
        profile: profile.name,
        output,
        sessionId,
        host,
        activity: hooks.activity ?? null,
        resumedSession: resumeId,
        resumeFallback: fallback,
      }),
    );
  await recordRun(resumeId);
  const ownCommand = resumeId ? profile.resumeCommand! : profile.command;
  const baseCommand =
    profile.sandbox === 'none' ? ownCommand : commandInsideSandbox(profile.name, ownCommand);
  const command = [...baseCommand.map(markSession), ...budgetArgsFor(profile.name, input.maxBudgetUsd)];
  const argv = expandCommand(command, {
    prompt:
      Buffer.byteLength(promptText) <= PROMPT_ARG_MAX
        ? promptText
        : `${input.prompt}\n\nYour full instructions and context are in ${promptPath}; read that file first.`,
    prompt_file: resumeId ? resumePromptPath : promptPath,
    workdir: input.workdir,
    task_id: input.taskId,
    run_dir: runDir,
    saga_root: machine.sagaRoot,
    node: machine.nodePath,
  }).map((arg) => (arg === SESSION_MARK ? resumeId! : arg));
  const session = resumeId
    ? `resuming session ${resumeId} (${input.resume?.reason})`
    : fallback
      ? `fresh session: ${fallback}`
      : null;
  await fs.appendFile(
    transcriptPath,
    `=== saga ${input.role}/${input.stage} task ${input.taskId || '-'} attempt ${input.attempt} ` +
      `profile ${profile.name} (${hooks.label})${session ? `; ${session}` : ''} ===\n`,
  );
  const transcriptStart = (await fs.stat(transcriptPath)).size;

  const stream = createAgentStreamReader(profile.output, { model: profile.model, prices: profile.prices });
  const progressOf = (progress: ProcessProgress): AgentProgress => {
    const live = stream.snapshot();
    return {
      ...progress,
      lastLine: lastReadable || progress.lastLine,
      runLabel: input.runLabel,
      attempt: input.attempt,
      host,
      sessionId: live.sessionId ?? resumeId,
      usage: live.usage,
    };
  };
  let lastReadable = '';
  let lastProgress: ProcessProgress = { outputBytes: 0, lastLine: '', elapsedMs: 0 };
  hooks.heartbeat(progressOf(lastProgress));
  // An allow-list, never the worker's whole environment (its secrets would let the agent approve itself).
  const env = withEnvFailures(agentEnvironment, process.env, await readBackConfigSecrets(profile), {
    ...input.extraEnv,
    SAGA_NAME: input.sagaName,
    SAGA_TASK_ID: input.taskId,
    SAGA_ROLE: input.role,
    SAGA_STAGE: input.stage,
    SAGA_ATTEMPT: String(input.attempt),
    SAGA_PROMPT_FILE: promptPath,
    SAGA_REPORT_FILE: reportPath,
    SAGA_WORKTREE: input.workdir,
  });
  // Confined (issue 29): it reads its prompt, writes its report and the run files its command names, and
  // reaches its model API; the rest of the saga directory, the host's processes and the server are out of reach.
  const sandbox: SandboxRequest = {
    mode: profile.sandbox,
    sagaHome: machine.sagaHome ?? path.dirname(input.sagaDir),
    readableFiles: [promptPath, ...(resumeId ? [resumePromptPath] : [])],
    writableFiles: [
      reportPath,
      ...argv.filter((arg) => path.dirname(arg) === runDir && arg !== promptPath),
      ...(AGENT_PRESETS[profile.name]?.writableEnv ?? []).flatMap((name) => (env[name] ? [env[name]] : [])),
    ],
    stateFiles: AGENT_PRESETS[profile.name]?.stateFiles ?? [],
    network: [...profile.network.map(parseEndpoint), ...endpointsFromEnv(env)],
  };
  const spawned = await runConfined(sandbox, {
    argv,
    cwd: input.workdir,
    env,
    outputPath: transcriptPath,
    timeoutMs: profile.timeoutMs,
    idleTimeoutMs: profile.idleTimeoutMs,
    signal: hooks.signal,
    // The live view shows the last line a person can read, not the last raw JSON event.
    onProgress: (progress) => {
      lastProgress = progress;
      hooks.heartbeat(progressOf(progress));
    },
    onSpawn: async (pid) => fs.writeFile(pidPath, JSON.stringify(await processGroupRecord(pid))),
    stdinPath: profile.promptInput === 'stdin' ? (resumeId ? resumePromptPath : promptPath) : undefined,
    stopOnLine: (line) => {
      const readable = readableLine(profile.output, line)?.trim();
      if (readable) lastReadable = readable.slice(0, 200);
      const known = stream.snapshot().sessionId;
      stream.read(line);
      const sessionId = stream.snapshot().sessionId;
      if (sessionId && sessionId !== known) {
        // At once, not at the next progress tick: a crash right after must still find it.
        hooks.heartbeat(progressOf(lastProgress));
        void recordRun(sessionId).catch(() => undefined);
      }
      return hopelessRetry(profile.output, line);
    },
  }).catch((err: unknown) => {
    // A missing agent CLI or worktree will not appear by retrying. A missing CLI is the task's answer
    // (shown in its status); a missing worktree is the workflow's own fault.
    if (err instanceof SpawnError && err.code) {
      return notInstalledFailure(profile.name, argv[0]!, err.message.replace(/^Cannot run '[^']*': /, ''));
    }
    if (err instanceof SpawnError) throw ApplicationFailure.nonRetryable(err.message, 'SpawnError');
    if (err instanceof SandboxUnavailableError) {
      throw ApplicationFailure.nonRetryable(
        `agent ${profile.name} cannot run confined: ${err.message}`,
        'SandboxUnavailable',
      );
    }
    throw err;
  });
  if (!('exitCode' in spawned)) {
    await fs.appendFile(transcriptPath, `${spawned.message}\n`);
    return [{ ...notStarted(spawned, { transcriptPath, promptPath, reportPath }), host }, false];
  }
  const run = spawned;
  await fs.rm(pidPath, { force: true });

  const reportText = await readHead(reportPath, REPORT_READ_MAX);
  const stdoutText = await readTail(transcriptPath, STDOUT_SCAN_MAX, transcriptStart);
  const outcome = readAgentOutcome({
    profile: profile.name,
    format: profile.output,
    transcript: stdoutText,
    exitCode: run.exitCode,
    stoppedFor: run.stoppedFor,
    sideOutput: (await readHead(path.join(runDir, AGENT_EVENTS_FILE), STDOUT_SCAN_MAX)) ?? undefined,
    model: profile.model,
    prices: profile.prices,
  });
  if (outcome.readAs !== output) {
    output = outcome.readAs; // `saga logs` renders the transcript as the format it was read as
    await fs.appendFile(
      transcriptPath,
      `=== saga: read as ${output} output; set \`output: ${output}\` in profile ${profile.name} for live progress ===\n`,
    );
  }
  // What the agent answered: its CLI's final text when the output is JSON events, else stdout itself.
  const answer = outcome.answer ?? stdoutText;
  const extracted = extractReport(reportText, answer);
  let { report, error: reportError } = extracted;
  // A reviewer may answer in plain text findings (DESIGN.md 4.6): that is not a JSON error.
  if (input.role === 'reviewer' && !report) reportError = null;
  const reportSize = report ? JSON.stringify(report).length : 0;
  if (reportSize > REPORT_KEEP_MAX) {
    reportError = `report is ${Math.round(reportSize / 1024)} KB, over the ${REPORT_KEEP_MAX / 1024} KB kept in workflow history; read it from ${reportPath}`;
    report = null;
  }
  const unknown =
    resumeId !== null &&
    (run.exitCode !== 0 || outcome.failure !== null) &&
    unknownSession(profile.output, stdoutText);
  const sessionId = outcome.sessionId ?? stream.snapshot().sessionId ?? (unknown ? null : resumeId);
  if (sessionId) await recordRun(sessionId);
  const result: RunAgentResult = {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    idle: run.idle,
    cancelled: run.aborted,
    durationMs: run.durationMs,
    outputBytes: run.outputBytes,
    lastLine: run.lastLine.slice(0, 200),
    transcriptPath,
    promptPath,
    reportPath,
    report,
    reportError,
    findings: input.role === 'reviewer' ? findingsText(extracted.report, reportText, answer) : null,
    // Plain-text profiles may still print a Claude-style result or Codex's token line.
    usage: outcome.usage ?? (profile.output === 'text' ? parseUsage(stdoutText) : null),
    sessionId,
    model: outcome.model,
    failure: outcome.failure,
    host,
    resumedSession: resumeId,
  };
  return [result, unknown];
}

/** `{session}` in a resume command: kept out of expandCommand, whose values are never expanded again. */
const SESSION_MARK = '\u0000session';
const markSession = (arg: string) => (arg === '{session}' ? SESSION_MARK : arg);

/** The result of a run whose program could not be started at all. */
function notStarted(
  failure: AgentFailure,
  paths: Pick<RunAgentResult, 'transcriptPath' | 'promptPath' | 'reportPath'>,
): RunAgentResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    idle: false,
    cancelled: false,
    durationMs: 0,
    outputBytes: 0,
    lastLine: failure.message.slice(0, 200),
    ...paths,
    report: null,
    reportError: null,
    findings: null,
    usage: null,
    sessionId: null,
    model: null,
    failure,
  };
}

function findingsText(
  report: Record<string, unknown> | null,
  reportText: string | null,
  stdout: string,
): string {
  const text =
    typeof report?.findings === 'string'
      ? report.findings
      : reportText?.trim()
        ? reportText
        : stdout.slice(-FINDINGS_MAX);
  return text.slice(0, FINDINGS_MAX);
}

/** An env reference the worker cannot resolve fails the run without retries (a retry would not find it either). */
function withEnvFailures<A extends unknown[], R>(resolve: (...args: A) => R, ...args: A): R {
  try {
    return resolve(...args);
  } catch (error) {
    if (error instanceof EnvReferenceError) throw ApplicationFailure.nonRetryable(error.message, error.type);
    throw error;
  }
}
