/**
 * Running git: argument arrays only, a clean environment, a timeout that ends before the activity's own
 * deadline, heartbeats while git runs, and one recovery from a lock file a crashed git left behind.
 * Errors carry git's stderr.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { runCommand } from '../process/command-helper';
import { isInside } from './paths';

/** A failed git command; the message names the command, folder and git's own stderr. */
export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly cwd: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed in ${cwd} (exit ${exitCode ?? 'none'}): ${stderr.trim()}`);
    this.name = 'GitError';
  }
}

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * git run by the worker is not the agent's: a minimal environment (no worker secret for a hook
 * or filter to read, no GIT_* variable redirecting the command) ...
 */
function gitEnv(): NodeJS.ProcessEnv {
  // GIT_LFS_SKIP_SMUDGE: a checkout or merge of an agent's branch never fetches from a URL its `.lfsconfig` names.
  const env: NodeJS.ProcessEnv = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_LFS_SKIP_SMUDGE: '1' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return env;
}

/**
 * ... and nothing of a repository an agent touched runs: no hooks (the user's own run confined, with
 * handoff.run_hooks), no fsmonitor or other configured program, no ext:: transport, no recursion into
 * submodules (a nested repository's own config names its own filters; see nested-repos.ts), and no
 * program a driver names (driverOverrides).
 */
export const SAFE_GIT_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.sshCommand=ssh',
  '-c',
  'core.editor=true',
  '-c',
  'core.pager=cat',
  '-c',
  'diff.external=',
  '-c',
  'protocol.ext.allow=never',
  '-c',
  'submodule.recurse=false',
  '-c',
  'diff.ignoreSubmodules=all',
  '-c',
  'status.submoduleSummary=false',
];

/** Config keys that define a filter, diff or merge driver (the driver's name is the middle part). */
const DRIVER_KEYS = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|required|textconv|command|driver)$/;
const DRIVER_KEY_PATTERN =
  '^(filter|diff|merge)\\..+\\.(clean|smudge|process|required|textconv|command|driver)$';
/** A merge driver's stand-in: git's own text merge, run as the documented external-driver command. */
const TEXT_MERGE = 'git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B';

/** The overrides that switch off every driver the keys name. */
function overridesFor(keys: string[]): Map<string, string> {
  const overrides = new Map<string, string>();
  for (const key of keys) {
    const match = DRIVER_KEYS.exec(key);
    if (!match) continue;
    const [, kind, name] = match;
    if (kind === 'filter') {
      // An empty command runs no filter; `required` off, so the file passes through unfiltered.
      for (const v of ['clean', 'smudge', 'process']) overrides.set(`filter.${name}.${v}`, '');
      overrides.set(`filter.${name}.required`, 'false');
    } else if (kind === 'diff') {
      // Empty: git refuses to run it (fails closed); the worker's own diffs never need a textconv.
      for (const v of ['textconv', 'command']) overrides.set(`diff.${name}.${v}`, '');
    } else {
      overrides.set(`merge.${name}.driver`, TEXT_MERGE);
    }
  }
  return overrides;
}

/**
 * Every filter, diff and merge driver the user's configuration defines (system, global, repository),
 * switched off: an agent's `.gitattributes` decides which files go through which driver, so a clean or
 * smudge filter (LFS too), a textconv or a merge driver would otherwise run, unconfined, on files an agent
 * chose. Disabled by name, whatever attributes file names it, through GIT_CONFIG_COUNT, which takes any
 * key and reaches the git processes git itself starts. A nested repository's own drivers never come into
 * play: its git never runs (nested-repos.ts, submodule.recurse off).
 */
export async function driverOverrides(cwd: string): Promise<NodeJS.ProcessEnv> {
  const args = [...SAFE_GIT_CONFIG, 'config', '-z', '--name-only', '--get-regexp', DRIVER_KEY_PATTERN];
  const out = await runCommand('git', args, {
    cwd,
    env: gitEnv(),
    maxBuffer: 1024 * 1024,
    timeoutMs: 60_000,
  });
  if (out.code !== 0 && out.code !== 1) {
    // Fail closed: no command runs with drivers left on.
    const why = out.code === null ? `${out.failure ?? 'killed'}\n${out.stderr}` : out.stderr;
    throw new GitError(['config', '--get-regexp', DRIVER_KEY_PATTERN], cwd, out.code, why);
  }
  const overrides = overridesFor(out.stdout.split('\0').filter(Boolean));
  const env: NodeJS.ProcessEnv = {};
  [...overrides].forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  if (overrides.size > 0) env.GIT_CONFIG_COUNT = String(overrides.size);
  return env;
}

/**
 * The user's drivers change rarely and no agent can write their config: read once per folder and reused
 * briefly, so a handoff's many commands pay for one read, not one per command.
 */
const DRIVER_CACHE_MS = 30_000;
const DRIVER_CACHE_SIZE = 256;
const driverCache = new Map<string, { at: number; env: Promise<NodeJS.ProcessEnv> }>();

function cachedDriverOverrides(cwd: string): Promise<NodeJS.ProcessEnv> {
  const hit = driverCache.get(cwd);
  if (hit && Date.now() - hit.at < DRIVER_CACHE_MS) return hit.env;
  if (driverCache.size >= DRIVER_CACHE_SIZE) driverCache.clear();
  const env = driverOverrides(cwd);
  driverCache.set(cwd, { at: Date.now(), env });
  env.catch(() => driverCache.delete(cwd));
  return env;
}

/** Forgets the drivers read so far (tests that change the user's config between commands). */
export function forgetDriverOverrides(): void {
  driverCache.clear();
}

/** How long one git command may run (worktree add/remove and merges in a big repo can take minutes). */
export const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;
const GIT_TIMEOUT_VARIABLE = 'SAGA_GIT_TIMEOUT_MS';
/** A command's process timeout stops this long before its activity's own deadline, so no retry overlaps it. */
const DEADLINE_MARGIN_MS = 15_000;
const GIT_HEARTBEAT_MS = 5_000;

/** The configured per-command timeout: `SAGA_GIT_TIMEOUT_MS` in the worker's environment, else 10 minutes. */
export function gitTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[GIT_TIMEOUT_VARIABLE];
  if (raw === undefined || raw.trim() === '') return DEFAULT_GIT_TIMEOUT_MS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw ApplicationFailure.nonRetryable(
      `${GIT_TIMEOUT_VARIABLE} must be a positive whole number of milliseconds, not '${raw}'`,
      'InvalidConfig',
    );
  }
  return value;
}

/**
 * Inside an activity: the time left before its start-to-close deadline (less a margin), so git is killed
 * before Temporal gives up on the attempt and starts another one in the same worktree.
 */
function activityTimeLeftMs(): number {
  const info = asyncLocalStorage.getStore()?.info;
  if (!info?.startToCloseTimeoutMs) return Infinity;
  const deadline = info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs;
  // Test environments give placeholder times (scheduled at 1 ms after 1970): no real deadline then.
  if (deadline < Date.now() - 24 * 3600_000) return Infinity;
  return Math.max(1_000, deadline - Date.now() - DEADLINE_MARGIN_MS);
}

/** Often enough for any heartbeat timeout (saga.config.yaml may set a short one). */
const heartbeatEveryMs = (timeoutMs: number | undefined) =>
  Math.max(100, Math.min(GIT_HEARTBEAT_MS, Math.floor((timeoutMs ?? Infinity) / 3)));

export async function execGit(cwd: string, args: string[]): Promise<GitOutput> {
  const timeoutMs = Math.min(gitTimeoutMs(), activityTimeLeftMs());
  const context = asyncLocalStorage.getStore();
  const started = Date.now();
  // A slow git command (worktree add in a big repo) must not look like a dead worker: heartbeat while it runs.
  const beat = context
    ? setInterval(() => {
        context.heartbeat({
          step: 'git',
          lastLine: `git ${args.slice(0, 3).join(' ')}`,
          elapsedMs: Date.now() - started,
          outputBytes: 0,
        });
      }, heartbeatEveryMs(context.info.heartbeatTimeoutMs))
    : undefined;
  try {
    const drivers = await cachedDriverOverrides(cwd).catch((error: Error) => {
      throw new GitError(
        args,
        cwd,
        null,
        `not run: the drivers to switch off could not be read: ${error.message}`,
      );
    });
    const out = await runCommand('git', [...SAFE_GIT_CONFIG, ...args], {
      cwd,
      env: { ...gitEnv(), ...drivers },
      maxBuffer: 64 * 1024 * 1024,
      timeoutMs,
    });
    if (out.timedOut) {
      throw new GitError(
        args,
        cwd,
        null,
        `timed out after ${timeoutMs} ms and was killed (raise ${GIT_TIMEOUT_VARIABLE} if git needs longer here)\n${out.stderr}`,
      );
    }
    if (out.code === null) throw new GitError(args, cwd, null, `${out.failure ?? 'killed'}\n${out.stderr}`);
    return { code: out.code, stdout: out.stdout, stderr: out.stderr };
  } finally {
    if (beat) clearInterval(beat);
  }
}

const STALE_LOCK_MS = 10_000;
const LOCK_MESSAGE = /Unable to create '([^']+\.lock)': File exists/;

/** Linux only (reads /proc); elsewhere the lock's age alone decides. */
async function gitProcessRunningIn(dirs: string[]): Promise<boolean> {
  const pids = await fs.readdir('/proc').catch(() => [] as string[]);
  for (const pid of pids) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if ((await fs.readFile(`/proc/${pid}/comm`, 'utf8')).trim() !== 'git') continue;
      const cwd = await fs.readlink(`/proc/${pid}/cwd`);
      if (dirs.some((dir) => isInside(dir, cwd))) return true;
    } catch {
      // The process ended or is not ours to inspect.
    }
  }
  return false;
}

/** Removes a lock left by a crashed git; returns a note, or null when the lock may be live. */
async function removeStaleLock(cwd: string, stderr: string): Promise<string | null> {
  const lock = LOCK_MESSAGE.exec(stderr)?.[1];
  if (!lock) return null;
  const stat = await fs.stat(lock).catch(() => null);
  if (!stat) return `lock ${lock} disappeared; retried`;
  const ageMs = Date.now() - stat.mtimeMs;
  if (ageMs < STALE_LOCK_MS) return null;
  const gitDirIndex = lock.lastIndexOf(`${path.sep}.git${path.sep}`);
  const repoDir = gitDirIndex >= 0 ? lock.slice(0, gitDirIndex) : path.dirname(lock);
  if (await gitProcessRunningIn([cwd, repoDir])) return null;
  await fs.rm(lock, { force: true });
  return `removed stale lock ${lock} (${Math.round(ageMs / 1000)} s old, no git process running) and retried`;
}

/**
 * Runs git and returns its output whatever the exit code, recovering once from a stale lock file.
 * Notes about recoveries are appended to `notes` so activities can report them.
 */
export async function runGitRaw(cwd: string, args: string[], notes?: string[]): Promise<GitOutput> {
  const first = await execGit(cwd, args);
  if (first.code === 0) return first;
  const note = await removeStaleLock(cwd, first.stderr);
  if (!note) return first;
  notes?.push(note);
  return execGit(cwd, args);
}

/** Runs git with an argument array and returns stdout; throws GitError (with stderr) on failure. */
export async function runGit(cwd: string, args: string[], notes?: string[]): Promise<string> {
  const out = await runGitRaw(cwd, args, notes);
  if (out.code !== 0) throw new GitError(args, cwd, out.code, out.stderr || out.stdout);
  return out.stdout;
}

/** `-c` options so commits work on a machine with no git identity configured. */
export async function identityArgs(cwd: string): Promise<string[]> {
  // One process for both keys (exit 1 when neither is set).
  const out = await execGit(cwd, ['config', '--get-regexp', '^user\\.(name|email)$']);
  const keys = new Set(out.stdout.split('\n').map((line) => line.split(' ')[0]));
  return [
    ...(keys.has('user.name') ? [] : ['-c', 'user.name=Saga']),
    ...(keys.has('user.email') ? [] : ['-c', 'user.email=saga@localhost']),
  ];
}

/** How much of a command's output a failure message carries. */
export const OUTPUT_TAIL = 4000;
