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
import { cachedDriverOverrides } from './drivers';
import { GitError, gitEnv, SAFE_GIT_CONFIG, type GitOutput } from './git-settings';
import { isInside } from './paths';

export { forgetDriverOverrides } from './drivers';
export { GitError, SAFE_GIT_CONFIG, type GitOutput } from './git-settings';

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
export const heartbeatEveryMs = (timeoutMs: number | undefined) =>
  Math.max(100, Math.min(GIT_HEARTBEAT_MS, Math.floor((timeoutMs ?? Infinity) / 3)));

/**
 * `extraEnv`: variables for this one command on top of the worker's minimal git environment (push.ts
 * supplies a credential helper and its token this way, for the push alone).
 */
export async function execGit(
  cwd: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<GitOutput> {
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
      env: { ...gitEnv(), ...drivers, ...extraEnv },
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
export async function runGitRaw(
  cwd: string,
  args: string[],
  notes?: string[],
  extraEnv?: NodeJS.ProcessEnv,
): Promise<GitOutput> {
  const first = await execGit(cwd, args, extraEnv);
  if (first.code === 0) return first;
  const note = await removeStaleLock(cwd, first.stderr);
  if (!note) return first;
  notes?.push(note);
  return execGit(cwd, args, extraEnv);
}

/** Runs git with an argument array and returns stdout; throws GitError (with stderr) on failure. */
export async function runGit(
  cwd: string,
  args: string[],
  notes?: string[],
  extraEnv?: NodeJS.ProcessEnv,
): Promise<string> {
  const out = await runGitRaw(cwd, args, notes, extraEnv);
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
