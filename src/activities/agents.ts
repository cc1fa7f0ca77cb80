/**
 * The `runAgent` activity: runs one coding agent process (any role, DESIGN.md 4.4 and 4.6) with its prompt
 * file, report file and transcript under `<sagaDir>/runs/<label>/`, heartbeating while it works. Only a
 * small summary goes back into workflow history; everything big stays in those files.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  checksRunAfter,
  hopelessRetry,
  notInstalledFailure,
  readableLine,
  readAgentOutcome,
  unknownSession,
  type AgentFailure,
} from '../domain/agent-cli-output';
import { createAgentStreamReader } from '../domain/agent-stream';
import { extractReport, parseUsage } from '../domain/agent-output';
import { AGENT_EVENTS_FILE, AGENT_RUN_FILE, budgetArgsFor } from '../domain/agent-presets';
import { expandCommand, ResolvedAgentProfileSchema } from '../domain/config';
import type { Usage } from '../domain/state';
import { agentEnvironment } from '../domain/agent-env';
import { findSagaRoot, readBackConfigSecrets } from './config-loader';
import {
  endLeftoverGroup,
  processGroupRecord,
  runDirectory,
  runProcess,
  SpawnError,
  type ProcessGroupRecord,
  type ProcessProgress,
} from './process';

export const AGENT_ROLES = ['planner', 'implementer', 'reviewer', 'resolver'] as const;

export const RunAgentInputSchema = z.object({
  sagaName: z.string().min(1),
  sagaDir: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  role: z.enum(AGENT_ROLES),
  /** planner `questions|plan|revise`, reviewer `plan|task`, resolver `merge`, implementer e.g. `implement`. */
  stage: z.string().min(1),
  taskId: z.string(),
  attempt: z.number().int().min(1),
  profile: ResolvedAgentProfileSchema,
  /** The instructions, short text; files and context are added to the prompt file below it. */
  prompt: z.string(),
  /** Files whose text is appended to the prompt file (truncated), e.g. earlier validation output. */
  attachments: z.array(z.string()).default([]),
  /** Machine-readable context, the last ```json block of the prompt file. */
  context: z.record(z.unknown()).default({}),
  workdir: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  extraEnv: z.record(z.string()).optional(),
  /** e.g. `m1t2-a1`; sanitised into one folder name under `<sagaDir>/runs/`. */
  runLabel: z.string().min(1),
  /**
   * Continue the CLI's session of an earlier run instead of starting cold (issue 16): a fix attempt
   * (`retry`, its prompt is the failure notes and check output) or the same run after its worker died
   * (`interrupted`). A null session id, a profile without resume or another host runs fresh, logged.
   */
  resume: z
    .object({
      sessionId: z.string().min(1).nullable(),
      /** The host that ran the session (CLIs keep sessions under the user's home on that machine). */
      host: z.string().nullable().default(null),
      reason: z.enum(['retry', 'interrupted']),
    })
    .optional(),
  /** What the task and saga budgets leave for this run, for CLIs that can cap a run (null: no budget). */
  maxBudgetUsd: z.number().min(0).nullable().optional(),
});
export type RunAgentInput = z.input<typeof RunAgentInputSchema>;

export interface RunAgentResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  idle: boolean;
  cancelled: boolean;
  durationMs: number;
  outputBytes: number;
  lastLine: string;
  transcriptPath: string;
  promptPath: string;
  reportPath: string;
  report: Record<string, unknown> | null;
  reportError: string | null;
  /** Reviewer only: the findings text (report `findings`, report file text, or the end of stdout). */
  findings: string | null;
  usage: Usage | null;
  /** The CLI's own session id, when its output names one. */
  sessionId?: string | null;
  model?: string | null;
  /** Why the run failed, read from the CLI's output; `retryable: false` ends the task's attempts. */
  failure?: AgentFailure | null;
  /** The machine that ran it (a session can only be resumed there). */
  host?: string;
  /** The session this run continued; null when it started fresh. */
  resumedSession?: string | null;
  /** Why a resume that was asked for ran as a fresh session instead (one line); null otherwise. */
  resumeFallback?: string | null;
}

/** The activity's heartbeat details while an agent runs: the live view, and what a crashed try resumes. */
export interface AgentProgress extends ProcessProgress {
  runLabel: string;
  attempt: number;
  host: string;
  sessionId: string | null;
  usage: Usage | null;
}

const ATTACHMENT_MAX = 24 * 1024;
const ATTACHMENT_HEAD = 4 * 1024;
const ATTACHMENTS_TOTAL_MAX = 64 * 1024;
/** Linux caps one argv element at 128 KiB; a longer prompt is passed by file reference. */
const PROMPT_ARG_MAX = 100_000;
const REPORT_READ_MAX = 1024 * 1024;
const REPORT_KEEP_MAX = 64 * 1024;
const STDOUT_SCAN_MAX = 256 * 1024;
const FINDINGS_MAX = 16 * 1024;

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

/** What a run needs from its caller: an activity passes its heartbeat and cancellation; `saga doctor` its own. */
export interface AgentRunHooks {
  heartbeat(details: AgentProgress): void;
  signal: AbortSignal;
  /** Written in the transcript's header, e.g. `activity attempt 2`. */
  label: string;
  /** The activity's identity (workflow run and activity id), recorded with the session in the run folder. */
  activity?: string;
}

type ResumeRequest = NonNullable<z.infer<typeof RunAgentInputSchema>['resume']>;

/**
 * The session of this run that a previous try of the same activity had started: from its last heartbeat,
 * else from the run folder's agent.json (written as soon as the CLI printed the id, heartbeats are
 * throttled). Null when that try never got that far.
 */
async function interruptedSession(
  input: z.infer<typeof RunAgentInputSchema>,
  details: unknown,
  activity: string,
): Promise<ResumeRequest | null> {
  const beat = details as Partial<AgentProgress> | undefined;
  if (beat?.runLabel === input.runLabel && typeof beat.sessionId === 'string' && beat.sessionId)
    return { sessionId: beat.sessionId, host: beat.host ?? null, reason: 'interrupted' };
  const file = path.join(runDirectory(input.sagaDir, input.runLabel), AGENT_RUN_FILE);
  const recorded = await fs
    .readFile(file, 'utf8')
    .then((t) => JSON.parse(t) as { activity?: string; sessionId?: string | null; host?: string })
    .catch(() => null);
  if (recorded?.activity === activity && recorded.sessionId)
    return { sessionId: recorded.sessionId, host: recorded.host ?? null, reason: 'interrupted' };
  return null;
}

/** Why an asked-for resume cannot happen here; null when it can be tried. */
function resumeObstacle(input: z.infer<typeof RunAgentInputSchema>, resume: ResumeRequest, host: string) {
  if (!input.profile.resumeCommand)
    return `profile ${input.profile.name} does not resume sessions (its CLI has no resume, or resume: false)`;
  if (!resume.sessionId) return 'the previous run printed no session id';
  if (resume.host && resume.host !== host)
    return `session ${resume.sessionId} was recorded on ${resume.host}, this worker runs on ${host}`;
  return null;
}

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

export interface AgentMachine {
  nodePath: string;
  sagaRoot: string;
}

export function createAgentActivities(deps: { sagaHome: string; nodePath?: string; sagaRoot?: string }) {
  const machine = { nodePath: deps.nodePath ?? process.execPath, sagaRoot: deps.sagaRoot ?? findSagaRoot() };

  return {
    async runAgent(rawInput: RunAgentInput): Promise<RunAgentResult> {
      const parsed = RunAgentInputSchema.safeParse(rawInput);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`);
        throw ApplicationFailure.nonRetryable(
          `Invalid runAgent input: ${problems.join('; ')}`,
          'InvalidInput',
        );
      }
      const ctx = Context.current();
      const activity = `${ctx.info.workflowExecution?.runId ?? '-'}/${ctx.info.activityId}`;
      // A retry after the worker died mid-run continues the session the dead try had started.
      const interrupted =
        ctx.info.attempt > 1
          ? await interruptedSession(parsed.data, ctx.info.heartbeatDetails, activity)
          : null;
      const result = await executeAgentRun(
        interrupted ? { ...parsed.data, resume: interrupted } : parsed.data,
        machine,
        {
          heartbeat: (details) => ctx.heartbeat(details),
          signal: ctx.cancellationSignal,
          label: `activity attempt ${ctx.info.attempt}`,
          activity,
        },
      );
      if (ctx.cancellationSignal.aborted) {
        // The tree is already dead (runProcess killed it); report the cancellation as Temporal expects.
        throw ctx.cancellationSignal.reason ?? new CancelledFailure('Activity cancelled');
      }
      // An implementer's failure is its task's answer (the task ends blocked with it); a planner, reviewer or
      // resolver that cannot run at all leaves its workflow nothing to go on.
      if (
        result.failure &&
        !result.failure.retryable &&
        !checksRunAfter(result.failure) &&
        parsed.data.role !== 'implementer'
      )
        throw ApplicationFailure.nonRetryable(result.failure.message, 'AgentCannotRun');
      return result;
    },
  };
}

/** One process: a fresh session, or `resumeId`'s. Also says whether the CLI refused an unknown session. */
async function runAgentOnce(
  input: z.infer<typeof RunAgentInputSchema>,
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
  const recordRun = (sessionId: string | null) =>
    writeAtomic(
      runFile,
      JSON.stringify({
        profile: profile.name,
        output: profile.output,
        sessionId,
        host,
        activity: hooks.activity ?? null,
        resumedSession: resumeId,
        resumeFallback: fallback,
      }),
    );
  await recordRun(resumeId);
  const baseCommand = resumeId ? profile.resumeCommand! : profile.command;
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
  const spawned = await runProcess({
    argv,
    cwd: input.workdir,
    // An allow-list, never the worker's whole environment (its secrets would let the agent approve itself).
    env: agentEnvironment(process.env, await readBackConfigSecrets(profile), {
      ...input.extraEnv,
      SAGA_NAME: input.sagaName,
      SAGA_TASK_ID: input.taskId,
      SAGA_ROLE: input.role,
      SAGA_STAGE: input.stage,
      SAGA_ATTEMPT: String(input.attempt),
      SAGA_PROMPT_FILE: promptPath,
      SAGA_REPORT_FILE: reportPath,
      SAGA_WORKTREE: input.workdir,
    }),
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

/**
 * The prompt of a resumed session: it already holds the task and its own earlier turns, so only what is
 * new goes in — why the last attempt failed and the failing checks' output (a retry), or that it was cut
 * off (a crash) — with the reporting rules and the machine context as in the full prompt.
 */
async function composeResumePrompt(
  input: z.infer<typeof RunAgentInputSchema>,
  reportPath: string,
  promptPath: string,
): Promise<string> {
  const notes = Array.isArray(input.context.notes) ? (input.context.notes as unknown[]).map(String) : [];
  const intro =
    input.resume?.reason === 'interrupted'
      ? [
          'Your previous run on this task was cut off before it finished (the machine running it stopped).',
          'Carry on from where you were: the files you changed are still in your working directory.',
        ]
      : [
          `Attempt ${input.attempt}: your last attempt at this task did not pass its checks. Fix what they`,
          'report below, in the same working directory; your earlier changes are still there.',
        ];
  const body = [
    ...intro,
    '',
    ...(notes.length ? ['## What failed', '', ...notes.map((n) => `- ${n}`), ''] : []),
    `Your full instructions are still in ${promptPath}.`,
  ].join('\n');
  return composePrompt({ ...input, prompt: body }, reportPath);
}

/** Temp file and rename: a reader (or a crash) never sees half of it. */
async function writeAtomic(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  await fs.writeFile(temp, text);
  await fs.rename(temp, file);
}

/** Instructions, then attachments, then how to answer, then the machine context as the LAST json block. */
async function composePrompt(
  input: z.infer<typeof RunAgentInputSchema>,
  reportPath: string,
): Promise<string> {
  const parts = [input.prompt.trimEnd(), ''];
  if (input.attachments.length > 0) {
    parts.push('## Attachments', '');
    let budget = ATTACHMENTS_TOTAL_MAX;
    for (const attachment of input.attachments) {
      const file = path.resolve(input.sagaDir, attachment);
      if (budget <= 0) {
        parts.push(`### ${file}`, '', '(not included: attachment budget used up; read the file itself)', '');
        continue;
      }
      const text = await excerpt(file, Math.min(ATTACHMENT_MAX, budget));
      budget -= Buffer.byteLength(text);
      parts.push(`### ${file}`, '', '~~~~text', text.trimEnd(), '~~~~', '');
    }
  }
  parts.push(
    '## Reporting',
    '',
    `Write your answer as one JSON object to the file named by $SAGA_REPORT_FILE (${reportPath}),` +
      ' or print it as the last ```json block of your output.',
    '',
    '## Context',
    '',
    '```json',
    // Backticks are escaped so the context can never close its own fence.
    JSON.stringify(input.context, null, 2).replace(/`/g, '\\u0060'),
    '```',
    '',
  );
  return parts.join('\n');
}

/** The whole file when small, else its head and tail with a note on what was left out. */
async function excerpt(file: string, max: number): Promise<string> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    return `(could not read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    const { size } = await handle.stat();
    if (size <= max) return (await handle.readFile()).toString('utf8');
    const head = Math.min(ATTACHMENT_HEAD, Math.floor(max / 4));
    const tail = max - head;
    const headBuf = Buffer.alloc(head);
    const tailBuf = Buffer.alloc(tail);
    await handle.read(headBuf, 0, head, 0);
    await handle.read(tailBuf, 0, tail, size - tail);
    return `${headBuf.toString('utf8')}\n[... ${size - head - tail} bytes left out; full file: ${file} ...]\n${tailBuf.toString('utf8')}`;
  } finally {
    await handle.close();
  }
}

async function endLeftover(pidPath: string): Promise<void> {
  const text = await fs.readFile(pidPath, 'utf8').catch(() => null);
  if (text === null) return;
  try {
    const record = JSON.parse(text) as ProcessGroupRecord;
    if (Number.isInteger(record.pgid) && record.pgid > 1) await endLeftoverGroup(record);
  } catch {
    // An unreadable record (crash while writing it) names no process to end.
  }
  await fs.rm(pidPath, { force: true });
}

async function readHead(file: string, max: number): Promise<string | null> {
  const handle = await fs.open(file, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The last `max` bytes of the file, never before `from`. */
async function readTail(file: string, max: number, from: number): Promise<string> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(from, size - max);
    const buf = Buffer.alloc(Math.max(0, size - start));
    await handle.read(buf, 0, buf.length, start);
    return buf.toString('utf8');
  } finally {
    await handle.close();
  }
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
