/**
 * What an agent run came to, read from its files after the process ended: its outcome from the CLI's
 * output, its report (bounded: workflow history keeps only a small one), a reviewer's findings.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { extractReport, parseUsage } from '../../domain/agents/agent-output';
import {
  notInstalledFailure,
  readAgentOutcome,
  unknownSession,
  type AgentFailure,
} from '../../domain/agents/cli-output';
import { AGENT_EVENTS_FILE } from '../../domain/config/agent-presets';
import { stderrLines } from '../../domain/text/stderr-lines';
import { SpawnError } from '../process/process';
import { SandboxUnavailableError, type runConfined } from '../sandbox';
import type { AgentRunInput, RunAgentResult } from './input';
import { readHead, readTail } from './run-files';
import type { AgentRunRecord, RunFiles } from './run-setup';

const REPORT_READ_MAX = 1024 * 1024;
const REPORT_KEEP_MAX = 64 * 1024;
const STDOUT_SCAN_MAX = 256 * 1024;
const FINDINGS_MAX = 16 * 1024;

type ProcessRun = Extract<Awaited<ReturnType<typeof runConfined>>, { exitCode: unknown }>;

/**
 * A process that could not start: a missing agent CLI will not appear by retrying, and is the task's
 * answer (shown in its status); a missing worktree is the workflow's own fault; anything else is thrown.
 */
export function spawnFailure(err: unknown, profile: string, program: string): AgentFailure {
  if (err instanceof SpawnError && err.code) {
    return notInstalledFailure(profile, program, err.message.replace(/^Cannot run '[^']*': /, ''));
  }
  if (err instanceof SpawnError) throw ApplicationFailure.nonRetryable(err.message, 'SpawnError');
  if (err instanceof SandboxUnavailableError) {
    throw ApplicationFailure.nonRetryable(
      `agent ${profile} cannot run confined: ${err.message}`,
      'SandboxUnavailable',
    );
  }
  throw err;
}

/** The result of a run whose program could not be started at all. */
export function notStarted(failure: AgentFailure, files: RunFiles): RunAgentResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    idle: false,
    cancelled: false,
    durationMs: 0,
    outputBytes: 0,
    lastLine: failure.message.slice(0, 200),
    transcriptPath: files.transcriptPath,
    promptPath: files.promptPath,
    reportPath: files.reportPath,
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

/** The agent's report, kept only when small enough for workflow history; a reviewer may answer in text. */
function boundedReport(input: AgentRunInput, reportText: string | null, answer: string, reportPath: string) {
  const extracted = extractReport(reportText, answer);
  let { report, error: reportError } = extracted;
  // A reviewer may answer in plain text findings: that is not a JSON error.
  if (input.role === 'reviewer' && !report) reportError = null;
  const reportSize = report ? JSON.stringify(report).length : 0;
  if (reportSize > REPORT_KEEP_MAX) {
    reportError = `report is ${Math.round(reportSize / 1024)} KB, over the ${REPORT_KEEP_MAX / 1024} KB kept in workflow history; read it from ${reportPath}`;
    report = null;
  }
  return { extracted: extracted.report, report, reportError };
}

/** How the finished run went; also says whether the CLI refused to resume an unknown session. */
export async function readRunResult(
  input: AgentRunInput,
  run: ProcessRun,
  files: RunFiles,
  transcriptStart: number,
  record: AgentRunRecord,
  live: { sessionId: string | null; host: string; resumeId: string | null },
): Promise<[RunAgentResult, boolean]> {
  const profile = input.profile;
  const reportText = await readHead(files.reportPath, REPORT_READ_MAX);
  const stdoutText = await readTail(files.transcriptPath, STDOUT_SCAN_MAX, transcriptStart);
  const outcome = readAgentOutcome({
    profile: profile.name,
    format: profile.output,
    transcript: stdoutText,
    exitCode: run.exitCode,
    stoppedFor: run.stoppedFor,
    sideOutput: (await readHead(path.join(files.runDir, AGENT_EVENTS_FILE), STDOUT_SCAN_MAX)) ?? undefined,
    model: profile.model,
    prices: profile.prices,
  });
  if (outcome.readAs !== record.output) {
    record.output = outcome.readAs; // `saga logs` renders the transcript as the format it was read as
    await fs.appendFile(
      files.transcriptPath,
      `=== saga: read as ${record.output} output; set \`output: ${record.output}\` in profile ${profile.name} for live progress ===\n`,
    );
  }
  // What the agent answered: its CLI's final text when the output is JSON events, else stdout itself.
  const answer = outcome.answer ?? stdoutText;
  const { extracted, report, reportError } = boundedReport(input, reportText, answer, files.reportPath);
  const unknown =
    live.resumeId !== null &&
    (run.exitCode !== 0 || outcome.failure !== null) &&
    unknownSession(profile.output, stdoutText);
  const sessionId = outcome.sessionId ?? live.sessionId ?? (unknown ? null : live.resumeId);
  if (sessionId) await record.write(sessionId);
  const result: RunAgentResult = {
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    idle: run.idle,
    cancelled: run.aborted,
    durationMs: run.durationMs,
    outputBytes: run.outputBytes,
    lastLine: run.lastLine.slice(0, 200),
    stderrTail: stderrLines(run.stderrTail) || null,
    transcriptPath: files.transcriptPath,
    promptPath: files.promptPath,
    reportPath: files.reportPath,
    report,
    reportError,
    findings: input.role === 'reviewer' ? findingsText(extracted, reportText, answer) : null,
    // Plain-text profiles may still print a Claude-style result or Codex's token line.
    usage: outcome.usage ?? (profile.output === 'text' ? parseUsage(stdoutText) : null),
    sessionId,
    model: outcome.model,
    failure: outcome.failure,
    host: live.host,
    resumedSession: live.resumeId,
  };
  return [result, unknown];
}
