/**
 * Setting up one agent process: its run folder's files (prompt, report, run record, transcript header),
 * its command line, its environment and its sandbox.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { agentEnvironment, EnvReferenceError } from '../../domain/config/agent-env';
import { AGENT_PRESETS, AGENT_RUN_FILE } from '../../domain/config/agent-presets';
import { budgetArgsFor, commandInsideSandbox } from '../../domain/config/preset-commands';
import { expandCommand } from '../../domain/config/config';
import { endpointsFromEnv, parseEndpoint, type Endpoint } from '../../domain/config/sandbox';
import { readBackConfigSecrets } from '../config-loader';
import { runDirectory } from '../process/process';
import { privateHomeOf, type SandboxRequest } from '../sandbox';
import type { AgentMachine, AgentRunHooks, AgentRunInput } from './input';
import { composePrompt, composeResumePrompt } from './prompt';
import { endLeftover, writeAtomic } from './run-files';

/** Linux caps one argv element at 128 KiB; a longer prompt is passed by file reference. */
const PROMPT_ARG_MAX = 100_000;

/** The files of one run under `<sagaDir>/runs/<label>/`, and the prompt the agent gets. */
export interface RunFiles {
  runDir: string;
  promptPath: string;
  /** The prompt of a resumed session (only what is new); unused by a fresh one. */
  resumePromptPath: string;
  reportPath: string;
  transcriptPath: string;
  pidPath: string;
  /** What the agent is told: the full prompt, or a resumed session's short one. */
  promptText: string;
}

/** The prompt file the agent reads: the resume prompt when continuing a session. */
export const promptFileOf = (files: RunFiles, resumeId: string | null) =>
  resumeId ? files.resumePromptPath : files.promptPath;

/**
 * Creates the run folder and writes the prompt files; ends a leftover process of a crashed try and empties
 * the report file, so an answer left by an earlier try does not count.
 */
export async function prepareRunFiles(input: AgentRunInput, resumeId: string | null): Promise<RunFiles> {
  const runDir = runDirectory(input.sagaDir, input.runLabel);
  await fs.mkdir(runDir, { recursive: true });
  const promptPath = path.join(runDir, 'prompt.md');
  const reportPath = path.join(runDir, 'report.json');
  const pidPath = path.join(runDir, 'agent.pid');
  // A retry after a worker crash: the crashed try's agent may still run in this worktree; end it first.
  await endLeftover(pidPath);
  const fullPrompt = await composePrompt(input, reportPath);
  // Whole or not at all: the board, `saga mcp` and people read the prompt while the run goes on.
  await writeAtomic(promptPath, fullPrompt);
  // A resumed session already holds the task: it gets only what is new (failure notes, or "go on").
  const resumePromptPath = path.join(runDir, 'resume-prompt.md');
  const promptText = resumeId ? await composeResumePrompt(input, reportPath, promptPath) : fullPrompt;
  if (resumeId) await writeAtomic(resumePromptPath, promptText);
  await fs.writeFile(reportPath, '');
  const transcriptPath = path.join(runDir, 'transcript.log');
  return { runDir, promptPath, resumePromptPath, reportPath, transcriptPath, pidPath, promptText };
}

/**
 * The run record beside the transcript: how to read it (`saga logs` renders JSON streams as readable
 * lines), and the CLI's session as soon as it is known, so a try that dies mid-run leaves it for the
 * retry to resume.
 */
export class AgentRunRecord {
  private readonly file: string;
  /** The output format the transcript is read as (changes when the output turns out to be another). */
  output: string;

  constructor(
    files: RunFiles,
    private readonly fields: {
      profile: string;
      output: string;
      host: string;
      activity: string | null;
      resumedSession: string | null;
      resumeFallback: string | null;
    },
  ) {
    this.file = path.join(files.runDir, AGENT_RUN_FILE);
    this.output = fields.output;
  }

  write(sessionId: string | null): Promise<void> {
    const { profile, host, activity, resumedSession, resumeFallback } = this.fields;
    return writeAtomic(
      this.file,
      JSON.stringify({
        profile,
        output: this.output,
        sessionId,
        host,
        activity,
        resumedSession,
        resumeFallback,
      }),
    );
  }
}

/** `{session}` in a resume command: kept out of expandCommand, whose values are never expanded again. */
const SESSION_MARK = '\u0000session';
const markSession = (arg: string) => (arg === '{session}' ? SESSION_MARK : arg);

/** The agent's command line: its profile's command (or resume command), expanded for this run. */
export function agentArgv(
  input: AgentRunInput,
  machine: AgentMachine,
  files: RunFiles,
  resumeId: string | null,
): string[] {
  const profile = input.profile;
  const ownCommand = resumeId ? profile.resumeCommand! : profile.command;
  const baseCommand =
    profile.sandbox === 'none' ? ownCommand : commandInsideSandbox(profile.name, ownCommand);
  const command = [...baseCommand.map(markSession), ...budgetArgsFor(profile.name, input.maxBudgetUsd)];
  return expandCommand(command, {
    prompt:
      Buffer.byteLength(files.promptText) <= PROMPT_ARG_MAX
        ? files.promptText
        : `${input.prompt}\n\nYour full instructions and context are in ${files.promptPath}; read that file first.`,
    prompt_file: promptFileOf(files, resumeId),
    workdir: input.workdir,
    task_id: input.taskId,
    run_dir: files.runDir,
    saga_root: machine.sagaRoot,
    node: machine.nodePath,
  }).map((arg) => (arg === SESSION_MARK ? resumeId! : arg));
}

/** Appends the run's header line to the transcript; returns where this run's output starts. */
export async function startTranscript(
  input: AgentRunInput,
  hooks: AgentRunHooks,
  files: RunFiles,
  resumeId: string | null,
  fallback: string | null,
): Promise<number> {
  const session = resumeId
    ? `resuming session ${resumeId} (${input.resume?.reason})`
    : fallback
      ? `fresh session: ${fallback}`
      : null;
  await fs.appendFile(
    files.transcriptPath,
    `=== saga ${input.role}/${input.stage} task ${input.taskId || '-'} attempt ${input.attempt} ` +
      `profile ${input.profile.name} (${hooks.label})${session ? `; ${session}` : ''} ===\n`,
  );
  return (await fs.stat(files.transcriptPath)).size;
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

/** An allow-list, never the worker's whole environment (its secrets would let the agent approve itself). */
export async function agentEnv(
  input: AgentRunInput,
  files: RunFiles,
): Promise<ReturnType<typeof agentEnvironment>> {
  return withEnvFailures(agentEnvironment, process.env, await readBackConfigSecrets(input.profile), {
    ...input.extraEnv,
    SAGA_NAME: input.sagaName,
    SAGA_TASK_ID: input.taskId,
    SAGA_ROLE: input.role,
    SAGA_STAGE: input.stage,
    SAGA_ATTEMPT: String(input.attempt),
    SAGA_PROMPT_FILE: files.promptPath,
    SAGA_REPORT_FILE: files.reportPath,
    SAGA_WORKTREE: input.workdir,
  });
}

/**
 * Confined: the agent reads its prompt, writes its report and the run files its command names, and
 * reaches its model API; the rest of the saga directory, the host's processes and the server are out of reach.
 */
export function agentSandbox(
  input: AgentRunInput,
  machine: AgentMachine,
  files: RunFiles,
  run: {
    argv: string[];
    env: ReturnType<typeof agentEnvironment>;
    resumeId: string | null;
    /** What the CLI's own config files name (cli-config-network.ts). */
    configNetwork?: Endpoint[];
  },
): SandboxRequest {
  const profile = input.profile;
  const preset = AGENT_PRESETS[profile.name];
  // A profile of its own name that runs a preset's CLI (`claude-opus: {command: [claude, ...]}`) keeps
  // that CLI's state and login the same way (else they would be hidden as another CLI's).
  const program = path.basename(profile.command[0] ?? '');
  const cli = preset ?? Object.values(AGENT_PRESETS).find((p) => p.cli?.program === program);
  return {
    mode: profile.sandbox,
    sagaHome: machine.sagaHome ?? path.dirname(input.sagaDir),
    readableFiles: [files.promptPath, ...(run.resumeId ? [files.resumePromptPath] : [])],
    writableFiles: [
      files.reportPath,
      ...run.argv.filter((arg) => path.dirname(arg) === files.runDir && arg !== files.promptPath),
      ...(preset?.writableEnv ?? []).flatMap((name) => (run.env[name] ? [run.env[name]] : [])),
    ],
    // The CLI's state is the saga's own (one copy per profile, kept for resume), its login read-only.
    privateHome: privateHomeOf(input.sagaDir),
    stateKey: profile.name,
    stateFiles: cli?.stateFiles ?? [],
    configFiles: cli?.configFiles ?? [],
    loginFiles: cli?.cli?.loginFiles ?? [],
    network: [
      ...profile.network.map(parseEndpoint),
      ...endpointsFromEnv(run.env),
      ...(run.configNetwork ?? []),
    ],
  };
}
