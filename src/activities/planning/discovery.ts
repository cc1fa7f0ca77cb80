/**
 * Environment discovery (the planning phase's first step): read the repo's own files, learn the program type
 * and its test/build/lint/typecheck commands from them (domain/planning/discovery.ts), then confirm each
 * command by running it.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { commandEnvironment } from '../../domain/config/agent-env';
import {
  detectProject,
  MANIFESTS,
  type CommandCandidate,
  type RepoFiles,
} from '../../domain/planning/discovery';
import {
  type DiscoveredCommand,
  type Environment,
  EnvironmentSchema,
} from '../../domain/planning/environment';
import { CommandSandboxSchema, type CommandSandbox } from '../../domain/config/sandbox';
import { zodIssueLines } from '../../domain/text/zod-errors';
import { ensurePlanningWorktree, finishPlanningWorktree } from './planning-worktree';
import { commandSandbox, runConfined } from '../sandbox';

/** Heartbeats when called inside an activity; a no-op when tests call the function directly. */
function heartbeatIfInActivity(details: unknown): void {
  asyncLocalStorage.getStore()?.heartbeat(details);
}

/** The root entries (and those of `src/`), and the text of each manifest detection reads. */
async function readRepoFiles(repo: string): Promise<RepoFiles> {
  const entries = await fs.readdir(repo, { withFileTypes: true });
  const rootEntries = entries.map((e) => e.name);
  if (entries.some((e) => e.name === 'src' && e.isDirectory())) {
    rootEntries.push(...(await fs.readdir(path.join(repo, 'src'))).map((n) => `src/${n}`));
  }
  const files: RepoFiles = { rootEntries };
  for (const name of MANIFESTS) {
    if (rootEntries.includes(name)) files[name] = await fs.readFile(path.join(repo, name), 'utf8');
  }
  return files;
}

// ---------------------------------------------------------------------------------------------------------
// The activity

export const DiscoverEnvironmentInputSchema = z.object({
  repo: z.string().min(1, 'repo is required'),
  sagaDir: z.string().min(1, 'sagaDir is required'),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .default(5 * 60_000),
  /**
   * The planning phase's scratch worktree: created (detached at `base`) when missing, and the commands run
   * there, never in the user's checkout. Without it the commands run in `repo` (a plain folder, in tests).
   */
  worktree: z
    .string()
    .refine((p) => path.isAbsolute(p), 'worktree must be an absolute path')
    .optional(),
  base: z
    .string()
    .min(1)
    .refine((b) => !b.startsWith('-'), "base must not start with '-'")
    .optional(),
  /** Discovery commands run confined like checks (saga.config.yaml `sandbox`, `network`). */
  sandbox: CommandSandboxSchema.default({}),
});

/**
 * `npx X` downloads X from the registry when it is not installed: an unrelated package could run. It is not
 * run unless `node_modules/.bin/X` exists; returns why it was skipped, or null.
 */
async function npxNotInstalled(argv: string[], cwd: string): Promise<string | null> {
  if (path.basename(argv[0] ?? '') !== 'npx') return null;
  const program = argv.slice(1).find((a) => !a.startsWith('-'));
  if (!program) return 'npx without a program';
  const bin = path.join(cwd, 'node_modules', '.bin', program);
  const installed = await fs.stat(bin).then(
    () => true,
    () => false,
  );
  return installed
    ? null
    : `${program} is not installed (no node_modules/.bin/${program}); npx would download it`;
}

/** `CI=1` keeps watch-mode test runners from waiting forever; colour codes would clutter the logs. */
const CONFIRM_ENV = {
  CI: '1',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  npm_config_update_notifier: 'false',
  // An `npx X` inside a script must not download a package that is not installed.
  npm_config_yes: 'false',
};

/** What discovery takes from its caller: the worker's environment, and timings tests shorten. */
export interface DiscoveryDeps {
  env?: NodeJS.ProcessEnv;
  heartbeatIntervalMs?: number;
  killGraceMs?: number;
}

/** One candidate command to confirm: where it runs, where its output goes, how it is confined. */
interface ConfirmRun {
  repo: string;
  outputPath: string;
  timeoutMs: number;
  sandbox: CommandSandbox;
  sagaHome: string;
  sagaDir: string;
}

/** Runs one candidate (argv, own process group, whole tree killed on timeout) and records the outcome. */
async function confirm(
  deps: DiscoveryDeps,
  env: NodeJS.ProcessEnv,
  candidate: CommandCandidate,
  { repo, outputPath, timeoutMs, sandbox, sagaHome, sagaDir }: ConfirmRun,
): Promise<DiscoveredCommand> {
  await fs.mkdir(path.dirname(outputPath), { recursive: true });
  await fs.writeFile(outputPath, `$ ${JSON.stringify(candidate.argv)}\n# cwd: ${repo}\n`);
  const started = Date.now();
  try {
    const run = await runConfined(commandSandbox(sandbox, sagaHome, sagaDir), {
      argv: candidate.argv,
      cwd: repo,
      env: commandEnvironment(env, CONFIRM_ENV), // never the worker's secrets
      outputPath,
      timeoutMs,
      signal: asyncLocalStorage.getStore()?.cancellationSignal,
      onProgress: (p) => heartbeatIfInActivity({ step: 'discovery', purpose: candidate.purpose, ...p }),
      progressIntervalMs: deps.heartbeatIntervalMs ?? 5000,
      killGraceMs: deps.killGraceMs,
    });
    if (run.aborted) throw new CancelledFailure(`discovery cancelled while running ${candidate.argv[0]}`);
    const confirmed = run.timedOut ? 'timed-out' : run.exitCode === 0 ? 'passed' : 'failed';
    const footer = run.timedOut ? `timed out after ${timeoutMs} ms` : `exit ${run.exitCode ?? run.signal}`;
    await fs.appendFile(outputPath, `\n# ${footer} (${run.durationMs} ms)\n`);
    // A command killed at its timeout has no meaningful exit code (make, for one, exits 2 as it dies).
    const exitCode = run.timedOut ? null : run.exitCode;
    return { ...candidate, confirmed, exitCode, durationMs: run.durationMs, outputPath };
  } catch (err) {
    if (err instanceof CancelledFailure) throw err;
    // The program is missing or cannot start: a finding about the environment, not a failed activity.
    await fs.appendFile(outputPath, `\n# ${(err as Error).message}\n`);
    return {
      ...candidate,
      confirmed: 'failed',
      exitCode: null,
      durationMs: Date.now() - started,
      outputPath,
    };
  }
}

type DiscoverInput = z.output<typeof DiscoverEnvironmentInputSchema>;

/** The checked input, with the repository's absolute path (a folder that exists). */
async function parseDiscoverInput(raw: z.input<typeof DiscoverEnvironmentInputSchema>) {
  const parsed = DiscoverEnvironmentInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = zodIssueLines(parsed.error, 'input');
    throw ApplicationFailure.nonRetryable(`discoverEnvironment: ${issues.join('; ')}`, 'InvalidInput');
  }
  const repo = path.resolve(parsed.data.repo);
  const stat = await fs.stat(repo).catch(() => null);
  if (!stat?.isDirectory()) {
    throw ApplicationFailure.nonRetryable(`Repository folder '${repo}' does not exist`, 'InvalidInput');
  }
  return { input: parsed.data, repo };
}

/** Where everything runs: the scratch worktree of the base commit when there is one, else the repo. */
async function discoveryWorkdir(input: DiscoverInput, repo: string): Promise<string> {
  if (!input.worktree) return repo;
  const planning = await ensurePlanningWorktree({
    repo,
    worktree: input.worktree,
    base: input.base ?? 'HEAD',
    sagaDir: path.resolve(input.sagaDir),
  });
  return planning.worktree;
}

const notRun = (candidate: CommandCandidate): DiscoveredCommand => ({
  ...candidate,
  confirmed: 'not-run',
  exitCode: null,
  durationMs: null,
  outputPath: null,
});

/** Each purpose's command, run to confirm it (an `npx` of a package not installed is not run). */
async function confirmCommands(
  deps: DiscoveryDeps,
  env: NodeJS.ProcessEnv,
  input: DiscoverInput,
  workdir: string,
  found: ReturnType<typeof detectProject>,
): Promise<DiscoveredCommand[]> {
  const logDir = path.join(path.resolve(input.sagaDir), 'runs', 'discovery');
  const commands: DiscoveredCommand[] = [];
  for (const purpose of ['test', 'build', 'lint', 'typecheck'] as const) {
    const candidate = found.candidates.find((c) => c.purpose === purpose);
    if (!candidate) {
      found.notes.push(`no ${purpose} command found`);
      continue;
    }
    const skipped = await npxNotInstalled(candidate.argv, workdir);
    if (skipped) {
      commands.push(notRun(candidate));
      found.notes.push(`${purpose}: \`${candidate.argv.join(' ')}\` not run: ${skipped}`);
      continue;
    }
    const last = await confirm(deps, env, candidate, {
      repo: workdir,
      outputPath: path.join(logDir, `${purpose}.log`),
      timeoutMs: input.timeoutMs,
      sandbox: input.sandbox,
      sagaHome: path.dirname(path.resolve(input.sagaDir)),
      sagaDir: path.resolve(input.sagaDir),
    });
    commands.push(last);
    if (last.confirmed !== 'passed') {
      found.notes.push(
        `${purpose}: \`${candidate.argv.join(' ')}\` ${last.confirmed} (see ${last.outputPath})`,
      );
    }
  }
  return commands;
}

/** The program type and its commands, each confirmed by running it, read from the repo's own files. */
async function discoverEnvironment(
  deps: DiscoveryDeps,
  raw: z.input<typeof DiscoverEnvironmentInputSchema>,
): Promise<Environment> {
  const env = deps.env ?? process.env;
  const { input, repo } = await parseDiscoverInput(raw);
  const workdir = await discoveryWorkdir(input, repo);
  const found = detectProject(await readRepoFiles(workdir));
  const commands = await confirmCommands(deps, env, input, workdir, found);
  // Launching may start a server or a UI that never exits: recorded, not run.
  if (found.launch) commands.push(notRun(found.launch));
  return EnvironmentSchema.parse({
    programType: found.programType,
    programTypeReason: found.programTypeReason,
    languages: found.languages,
    commands,
    launch: found.launch ? found.launch.argv.join(' ') : null,
    computerUse: env.DISPLAY || env.WAYLAND_DISPLAY ? 'local' : 'not available',
    notes: found.notes,
  });
}

export function createDiscoveryActivities(deps: DiscoveryDeps = {}) {
  return {
    finishPlanningWorktree,
    discoverEnvironment: (raw: z.input<typeof DiscoverEnvironmentInputSchema>): Promise<Environment> =>
      discoverEnvironment(deps, raw),
  };
}

export type DiscoveryActivities = ReturnType<typeof createDiscoveryActivities>;
