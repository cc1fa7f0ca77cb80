/**
 * Every git operation of the saga as an idempotent activity: worktrees per task, durable handoff commits,
 * milestone integration (merge, resolve, revert) and reconciliation when a saga is continued.
 * Git runs through `runGit` with argument arrays only; errors carry git's stderr.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { SAGA_NAME_PATTERN, slugify } from '../domain/naming';
import { runCommand } from './command-helper';
import { commandEnvironment } from '../domain/agent-env';
import { runProcess } from './process';

// ---------------------------------------------------------------------------------------------------------
// Running git

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

interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Variables from a surrounding git process (e.g. a hook running the worker) would redirect our commands. */
const INHERITED_GIT_VARS = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_PREFIX'];

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
  for (const name of INHERITED_GIT_VARS) delete env[name];
  return env;
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

async function execGit(cwd: string, args: string[]): Promise<GitOutput> {
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
    const out = await runCommand('git', args, {
      cwd,
      env: gitEnv(),
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
async function runGitRaw(cwd: string, args: string[], notes?: string[]): Promise<GitOutput> {
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
async function identityArgs(cwd: string): Promise<string[]> {
  // One process for both keys (exit 1 when neither is set).
  const out = await execGit(cwd, ['config', '--get-regexp', '^user\\.(name|email)$']);
  const keys = new Set(out.stdout.split('\n').map((line) => line.split(' ')[0]));
  return [
    ...(keys.has('user.name') ? [] : ['-c', 'user.name=Saga']),
    ...(keys.has('user.email') ? [] : ['-c', 'user.email=saga@localhost']),
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Small git queries

const fail = (type: string, message: string) => ApplicationFailure.nonRetryable(message, type);

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const pathExists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

/** Real path when it exists (so /tmp symlinks compare equal), else the resolved path. */
const canonical = (p: string) => fs.realpath(p).catch(() => path.resolve(p));

async function resolveCommit(cwd: string, rev: string): Promise<string | null> {
  const out = await execGit(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return out.code === 0 ? out.stdout.trim() : null;
}

async function requireCommit(cwd: string, rev: string, type: string, what: string): Promise<string> {
  const sha = await resolveCommit(cwd, rev);
  if (!sha) throw fail(type, `${what} '${rev}' does not name a commit in ${cwd}`);
  return sha;
}

const headOf = async (cwd: string) => (await runGit(cwd, ['rev-parse', 'HEAD'])).trim();

async function branchHead(cwd: string, branch: string): Promise<string | null> {
  return resolveCommit(cwd, `refs/heads/${branch}`);
}

async function isAncestorCommit(cwd: string, commit: string, of: string): Promise<boolean> {
  const out = await execGit(cwd, ['merge-base', '--is-ancestor', commit, of]);
  if (out.code === 0 || out.code === 1) return out.code === 0;
  throw new GitError(['merge-base', '--is-ancestor', commit, of], cwd, out.code, out.stderr);
}

async function mergeHead(cwd: string): Promise<string | null> {
  const out = await execGit(cwd, ['rev-parse', '-q', '--verify', 'MERGE_HEAD']);
  return out.code === 0 ? out.stdout.trim() : null;
}

const splitZ = (out: string) => out.split('\0').filter(Boolean);

/** Paths with uncommitted changes, untracked files included (ignored files are not work). */
async function dirtyFiles(cwd: string): Promise<string[]> {
  const tokens = splitZ(await runGit(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all']));
  const files: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    files.push(tokens[i].slice(3));
    if (/^[RC]/.test(tokens[i])) i++; // a rename is followed by its original path
  }
  return files;
}

async function unmergedFiles(cwd: string): Promise<string[]> {
  return splitZ(await runGit(cwd, ['diff', '--name-only', '-z', '--diff-filter=U']));
}

/** At most this many paths travel in an activity result or failure: payloads stay far below Temporal's 2 MB. */
export const MAX_LISTED_PATHS = 200;

/** The first MAX_LISTED_PATHS paths, for results that also carry the full count. */
export const listedPaths = (paths: string[]): string[] => paths.slice(0, MAX_LISTED_PATHS);

/** A few paths for a one-line message, with how many more there are. */
function samplePaths(paths: string[], shown = 5): string {
  const more = paths.length > shown ? ` and ${paths.length - shown} more` : '';
  return `${paths.slice(0, shown).join(', ')}${more}`;
}

/** `./.env/` → `.env`: a `worktree.copy` entry in the form git prints paths. */
const copyEntryPath = (entry: string) =>
  entry
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');

/** Whether `file` (as git prints it) is a `worktree.copy` entry or inside one. */
export function matchesCopyEntry(file: string, entries: readonly string[]): boolean {
  return entries.some((entry) => {
    const e = copyEntryPath(entry);
    return e !== '' && (file === e || file.startsWith(`${e}/`));
  });
}

/** Paths with staged changes against HEAD (renames as delete + add, so every path is listed). */
async function stagedFiles(cwd: string, filter?: string): Promise<string[]> {
  const args = ['diff', '--cached', '--name-only', '-z', '--no-renames'];
  return splitZ(await runGit(cwd, filter ? [...args, `--diff-filter=${filter}`] : args));
}

/**
 * Stages all the work in a worktree but `worktree.copy` paths (taken out again when the agent un-ignored or
 * force-added them; the files stay in the worktree). Returns the staged paths.
 */
async function stageWork(worktree: string, copies: readonly string[], notes: string[]): Promise<string[]> {
  await runGit(worktree, ['add', '-A'], notes);
  const staged = await stagedFiles(worktree);
  const caught = staged.filter((f) => matchesCopyEntry(f, copies));
  if (caught.length === 0) return staged;
  const entries = copies
    .map(copyEntryPath)
    .filter((e) => e !== '' && caught.some((f) => matchesCopyEntry(f, [e])));
  await runGit(worktree, ['reset', '-q', '--', ...entries.map((e) => `:(literal)${e}`)], notes);
  notes.push(`not committed (worktree.copy): ${samplePaths(caught)}`);
  return staged.filter((f) => !matchesCopyEntry(f, copies));
}

async function repoToplevel(repo: string): Promise<string> {
  if (!(await pathExists(repo))) throw fail('NotAGitRepo', `Repository folder '${repo}' does not exist`);
  const out = await execGit(repo, ['rev-parse', '--show-toplevel']);
  if (out.code !== 0 || !out.stdout.trim()) {
    throw fail('NotAGitRepo', `'${repo}' is not inside a git repository (${out.stderr.trim()})`);
  }
  return out.stdout.trim();
}

async function requireWorktreeDir(worktree: string): Promise<string> {
  if (!(await pathExists(worktree))) throw fail('WorktreeMissing', `Worktree '${worktree}' does not exist`);
  return worktree;
}

interface WorktreeEntry {
  path: string;
  canonicalPath: string;
  head: string | null;
  branch: string | null;
  exists: boolean;
  main: boolean;
}

async function listWorktrees(repo: string): Promise<WorktreeEntry[]> {
  const blocks = (await runGit(repo, ['worktree', 'list', '--porcelain'])).split(/\n\n+/).filter(Boolean);
  return Promise.all(
    blocks.map(async (block, index) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((line) => line.startsWith(`${name} `))
          ?.slice(name.length + 1) ?? null;
      const wtPath = field('worktree') ?? '';
      return {
        path: wtPath,
        canonicalPath: await canonical(wtPath),
        head: field('HEAD'),
        branch: field('branch')?.replace(/^refs\/heads\//, '') ?? null,
        exists: await pathExists(wtPath),
        main: index === 0,
      };
    }),
  );
}

/** Drops registrations whose folder was deleted, so the path or branch can be used again. */
async function pruneIfStale(repo: string, notes: string[]): Promise<WorktreeEntry[]> {
  const entries = await listWorktrees(repo);
  if (entries.every((e) => e.exists)) return entries;
  await runGit(repo, ['worktree', 'prune'], notes);
  const stale = entries.filter((e) => !e.exists).map((e) => e.path);
  notes.push(`pruned stale worktree registration(s): ${stale.join(', ')}`);
  return listWorktrees(repo);
}

async function assertValidBranchName(cwd: string, branch: string): Promise<void> {
  const out = await execGit(cwd, ['check-ref-format', '--branch', branch]);
  if (out.code !== 0) throw fail('InvalidInput', `'${branch}' is not a valid branch name`);
}

/**
 * The common case in one git process: neither the folder nor the branch exists yet. Returns null when that
 * is not so (or git refuses for any other reason), and the caller takes the careful path, which explains.
 */
async function addNewWorktree(
  repo: string,
  branch: string,
  worktree: string,
  base: string,
  notes: string[],
): Promise<{ baseCommit: string; created: true } | null> {
  if (await pathExists(worktree)) return null;
  const [add, baseCommit] = await Promise.all([
    runGitRaw(repo, ['worktree', 'add', '--quiet', '-b', branch, worktree, base], notes),
    resolveCommit(repo, base),
  ]);
  if (add.code !== 0 || !baseCommit) return null;
  return { baseCommit, created: true };
}

/**
 * Creates or reuses the worktree of `branch` at `worktree`. Reuse when already there; `worktree add` of an
 * existing branch; otherwise a new branch from the base commit.
 */
async function ensureWorktree(
  repoTop: string,
  branch: string,
  worktree: string,
  base: string,
  notes: string[],
): Promise<{ baseCommit: string; created: boolean }> {
  await assertValidBranchName(repoTop, branch);
  const baseCommit = await requireCommit(repoTop, base, 'UnknownBase', 'Base');
  const entries = await pruneIfStale(repoTop, notes);
  const target = await canonical(worktree);
  const atPath = entries.find((e) => e.canonicalPath === target);
  if (atPath) {
    if (atPath.branch === branch) return { baseCommit, created: false };
    throw fail(
      'WorktreeConflict',
      `'${worktree}' is already a worktree of ${atPath.branch ?? 'a detached HEAD'}, not of '${branch}'`,
    );
  }
  const elsewhere = entries.find((e) => e.branch === branch);
  if (elsewhere) {
    throw fail('BranchCheckedOut', `Branch '${branch}' is already checked out at '${elsewhere.path}'`);
  }
  if ((await pathExists(worktree)) && (await fs.readdir(worktree)).length > 0) {
    throw fail('PathOccupied', `'${worktree}' exists, is not empty and is not a worktree of this repository`);
  }
  const args = (await branchHead(repoTop, branch))
    ? ['worktree', 'add', worktree, branch]
    : ['worktree', 'add', '-b', branch, worktree, baseCommit];
  await runGit(repoTop, args, notes);
  return { baseCommit, created: true };
}

// ---------------------------------------------------------------------------------------------------------
// The handoff's guards

/**
 * Puts a task worktree back on its branch when the agent checked out another branch or detached HEAD,
 * keeping the agent's work: commits it made on a detached HEAD and whatever it left uncommitted. A detached
 * HEAD that only went forward from the branch moves the branch there; anything else is cherry-picked onto
 * the branch (the work is kept under refs/saga-archive/ meanwhile). No other ref is ever moved. Fails
 * without committing when the worktree is not this task's or the work does not apply to the branch.
 */
async function returnToTaskBranch(
  worktree: string,
  branch: string,
  exclude: readonly string[],
  notes: string[],
): Promise<void> {
  const headRef = (await execGit(worktree, ['symbolic-ref', '--quiet', 'HEAD'])).stdout.trim();
  if (headRef === `refs/heads/${branch}`) return;
  const notTheTasks = (why: string) =>
    fail(
      'WorktreeConflict',
      `'${worktree}' is not the worktree of ${branch} (${why}); nothing committed or removed there`,
    );
  const tip = await branchHead(worktree, branch);
  if (!tip) throw notTheTasks(`the branch does not exist`);
  const [entries, target] = await Promise.all([listWorktrees(worktree), canonical(worktree)]);
  const here = entries.find((e) => e.canonicalPath === target);
  if (!here || here.main) throw notTheTasks('not a linked worktree of the repository');
  const elsewhere = entries.find((e) => e.branch === branch);
  if (elsewhere) throw notTheTasks(`the branch is checked out at '${elsewhere.path}'`);
  const where = headRef ? `branch '${headRef.replace(/^refs\/heads\//, '')}'` : 'a detached HEAD';
  const unresolved = await unmergedFiles(worktree);
  if (unresolved.length > 0) {
    throw fail(
      'WorkOffTaskBranch',
      `The agent left '${worktree}' on ${where} with unresolved conflicts (${samplePaths(unresolved)}); ` +
        `nothing committed, '${branch}' is unchanged`,
    );
  }
  const head = await headOf(worktree);
  // Commits the agent made that no branch or tag holds: lost with the worktree unless brought along.
  const stray = (
    await runGit(worktree, ['rev-list', '--reverse', head, '--not', '--branches', '--tags', '--remotes'])
  )
    .split('\n')
    .filter(Boolean);
  const sinceTip = Number((await runGit(worktree, ['rev-list', '--count', head, '--not', tip])).trim());
  if (!headRef && (await isAncestorCommit(worktree, tip, head)) && sinceTip === stray.length) {
    // Only the agent's own commits ahead of the branch: the branch takes them as they are.
    if (head !== tip) await runGit(worktree, ['update-ref', `refs/heads/${branch}`, head, tip], notes);
    await runGit(worktree, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`], notes);
    notes.push(`the agent left ${where}; '${branch}' was moved forward to it (${stray.length} commit(s))`);
    return;
  }
  // Snapshot of everything uncommitted (an unreferenced commit), then the worktree goes back to the branch.
  await stageWork(worktree, exclude, notes);
  const tree = (await runGit(worktree, ['write-tree'])).trim();
  const headTree = (await runGit(worktree, ['rev-parse', `${head}^{tree}`])).trim();
  const picks = [...stray];
  if (tree !== headTree) {
    const id = await identityArgs(worktree);
    const message = `saga: work left on ${where} of ${branch}`;
    picks.push((await runGit(worktree, [...id, 'commit-tree', tree, '-p', head, '-m', message])).trim());
  }
  if (picks.length === 0) {
    await runGit(worktree, ['checkout', '-q', '-f', branch], notes);
    notes.push(`the agent left ${where} without changes; back on '${branch}'`);
    return;
  }
  const last = picks[picks.length - 1]!;
  const keep = `refs/saga-archive/${branch}/left-on-${last.slice(0, 12)}`;
  await runGit(worktree, ['update-ref', keep, last], notes);
  await runGit(worktree, ['checkout', '-q', '-f', branch], notes);
  const pick = await runGitRaw(worktree, ['cherry-pick', '--no-commit', ...picks], notes);
  if (pick.code !== 0) {
    await execGit(worktree, ['cherry-pick', '--quit']);
    await runGit(worktree, ['reset', '-q', '--hard', branch], notes);
    throw fail(
      'WorkOffTaskBranch',
      `The agent left '${worktree}' on ${where}, and its work does not apply onto '${branch}' ` +
        `(${(pick.stderr || pick.stdout).trim().split('\n')[0]}); saved as ${keep}, nothing committed`,
    );
  }
  await runGit(worktree, ['update-ref', '-d', keep], notes);
  notes.push(
    `the agent left ${where}; its work (${picks.length} commit(s) or uncommitted change sets) was brought back onto '${branch}'`,
  );
}

/** Refuses (before committing) a handoff that would commit too many files or too large ones. */
async function enforceHandoffLimits(
  worktree: string,
  staged: string[],
  limits: { maxFiles: number; maxFileBytes: number; skipHooks: boolean },
): Promise<void> {
  const refuse = async (what: string, offenders: string[], count: number) => {
    await execGit(worktree, ['reset', '-q']); // the worktree stays as the agent left it, nothing staged
    return ApplicationFailure.create({
      type: 'HandoffTooLarge',
      nonRetryable: true,
      message:
        `The handoff of '${worktree}' would commit ${what}: ${samplePaths(offenders)}. Nothing was committed; ` +
        'add generated files to .gitignore, or raise the limit in saga.config.yaml (handoff:)',
      details: [{ files: listedPaths(offenders), count }],
    });
  };
  if (staged.length > limits.maxFiles) {
    throw await refuse(
      `${staged.length} files (handoff.max_files is ${limits.maxFiles})`,
      staged,
      staged.length,
    );
  }
  const written = new Set(await stagedFiles(worktree, 'AMT'));
  const large: string[] = [];
  for (const file of staged.filter((f) => written.has(f))) {
    const stat = await fs.lstat(path.join(worktree, file)).catch(() => null);
    if (stat?.isFile() && stat.size > limits.maxFileBytes) large.push(`${file} (${stat.size} bytes)`);
  }
  if (large.length > 0) {
    throw await refuse(
      `${large.length} file(s) over ${limits.maxFileBytes} bytes (handoff.max_file_bytes)`,
      large,
      large.length,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Input schemas

const nonOption = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .refine((s) => !s.startsWith('-'), `${what} must not start with '-'`);
const absolutePath = (what: string) =>
  z
    .string()
    .min(1, `${what} is required`)
    .refine((p) => path.isAbsolute(p), `${what} must be an absolute path`)
    .transform((p) => path.resolve(p));
const repoPath = z
  .string()
  .min(1, 'repo is required')
  .transform((p) => path.resolve(p));
const sagaName = z.string().regex(SAGA_NAME_PATTERN, 'sagaName must be a valid saga name');
const message = z.string().trim().min(1, 'message must not be empty');

export const CheckRepoInputSchema = z.object({ repo: repoPath, base: nonOption('base').optional() });
export const PrepareWorktreeInputSchema = z.object({
  repo: repoPath,
  branch: nonOption('branch'),
  worktree: absolutePath('worktree'),
  base: nonOption('base'),
  copyFiles: z.array(z.string().min(1)).default([]),
  setup: z.array(z.array(z.string()).min(1, 'a setup command needs at least the program')).default([]),
  /** Worker variables the setup commands also get (saga.config.yaml `pass_env`). */
  passEnv: z.array(z.string()).optional(),
  env: z.record(z.string()).optional(),
  setupTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(20 * 60_000),
});
export const DEFAULT_HANDOFF_MAX_FILES = 2000;
export const DEFAULT_HANDOFF_MAX_FILE_BYTES = 5 * 1024 * 1024;
export const CommitHandoffInputSchema = z.object({
  worktree: absolutePath('worktree'),
  message,
  baseCommit: nonOption('baseCommit').optional(),
  /** The task branch: the commit lands there whatever the agent left checked out (or the handoff fails). */
  branch: nonOption('branch').optional(),
  /** `worktree.copy` entries: never committed, whatever .gitignore says by then. */
  exclude: z.array(z.string().min(1)).default([]),
  maxFiles: z.number().int().positive().default(DEFAULT_HANDOFF_MAX_FILES),
  maxFileBytes: z.number().int().positive().default(DEFAULT_HANDOFF_MAX_FILE_BYTES),
  /** `git commit --no-verify`: only when the user's config asks for it (their hooks may scan for secrets). */
  skipHooks: z.boolean().default(false),
});
export const RemoveWorktreeInputSchema = z.object({
  repo: repoPath,
  worktree: absolutePath('worktree'),
  /** `worktree.copy` entries: copies of the user's files, never work, so they never keep a worktree. */
  copies: z.array(z.string().min(1)).default([]),
});
export const EnsureIntegrationWorktreeInputSchema = z.object({
  repo: repoPath,
  branch: nonOption('branch'),
  worktree: absolutePath('worktree'),
  base: nonOption('base'),
});
export const MergeBranchInputSchema = z.object({
  worktree: absolutePath('worktree'),
  branch: nonOption('branch'),
  message,
});
export const CompleteMergeInputSchema = z.object({ worktree: absolutePath('worktree'), message });
export const WorktreeInputSchema = z.object({ worktree: absolutePath('worktree') });
export const ResetHardInputSchema = z.object({
  worktree: absolutePath('worktree'),
  commit: nonOption('commit'),
});
export const ResetTaskBranchInputSchema = z.object({
  repo: repoPath,
  branch: nonOption('branch').refine((b) => b.startsWith('saga/'), 'branch must be a saga branch (saga/...)'),
  to: nonOption('to'),
  archiveRef: nonOption('archiveRef').refine(
    (r) => r.startsWith('refs/saga-archive/'),
    'archiveRef must start with refs/saga-archive/',
  ),
});
export const IsAncestorInputSchema = z.object({
  repo: repoPath,
  commit: nonOption('commit'),
  of: nonOption('of'),
});
export const SagaWorktreesInputSchema = z.object({ repo: repoPath, sagaName });
export const CleanupSagaWorktreesInputSchema = SagaWorktreesInputSchema.extend({
  force: z.boolean().default(false),
});
export const ReconcileGitInputSchema = z.object({
  repo: repoPath,
  sagaName,
  integrationBranch: nonOption('integrationBranch'),
  tasks: z.array(
    z.object({
      key: z.string().min(1),
      branch: nonOption('branch'),
      commit: nonOption('commit').nullable(),
      /** When the saga records the task as integrated, a missing merge is reported. */
      expectMerged: z.boolean().optional(),
    }),
  ),
});
export const FastForwardBaseInputSchema = z.object({
  repo: repoPath,
  base: nonOption('base'),
  integrationBranch: nonOption('integrationBranch'),
});

function parseInput<S extends z.ZodTypeAny>(activity: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
  throw fail('InvalidInput', `${activity}: invalid input: ${issues}`);
}

// ---------------------------------------------------------------------------------------------------------
// Activities

const OUTPUT_TAIL = 4000;
const SETUP_PENDING_MARKER = 'saga-setup-pending';

export function createGitActivities(deps: { sagaHome: string }) {
  /** Setup logs go under the saga's own `runs/` folder when the branch names the saga. */
  function setupLogPath(branch: string, index: number): string {
    const m = /^saga\/([^/]+)\/(.+)$/.exec(branch);
    const dir = m
      ? path.join(deps.sagaHome, slugify(m[1], 63), 'runs', 'setup')
      : path.join(deps.sagaHome, 'runs', 'setup');
    return path.join(dir, `${slugify(m ? m[2] : branch, 60)}-${index + 1}.log`);
  }

  async function copyIgnoredFiles(repoTop: string, worktree: string, files: string[]) {
    const copied: string[] = [];
    const skipped: string[] = [];
    const realTop = await fs.realpath(repoTop);
    for (const rel of files) {
      const source = path.resolve(repoTop, rel);
      if (path.isAbsolute(rel) || !isInside(repoTop, source) || source === repoTop) {
        throw fail('InvalidInput', `copyFiles entry '${rel}' must be a path inside the repository`);
      }
      const realSource = await fs.realpath(source).catch(() => null);
      if (!realSource) {
        skipped.push(rel);
        continue;
      }
      if (!isInside(realTop, realSource)) {
        throw fail('InvalidInput', `copyFiles entry '${rel}' resolves outside the repository`);
      }
      // A copied file that git does not ignore would be committed with the task's work (a .env, say).
      const ignored = await execGit(repoTop, ['check-ignore', '-q', '--', rel]);
      if (ignored.code === 1) {
        throw fail(
          'CopyNotIgnored',
          `worktree.copy entry '${rel}' is not git-ignored in '${repoTop}' (or is tracked), so the task's ` +
            `handoff would commit it: add it to .gitignore or remove it from worktree.copy`,
        );
      }
      if (ignored.code !== 0) {
        throw new GitError(['check-ignore', '-q', '--', rel], repoTop, ignored.code, ignored.stderr);
      }
      const target = path.join(worktree, path.relative(repoTop, source));
      if (await pathExists(target)) {
        skipped.push(rel); // tracked files are already checked out; never overwrite
        continue;
      }
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.cp(source, target, { recursive: true, force: false, errorOnExist: false });
      copied.push(rel);
    }
    return { copied, skipped };
  }

  async function runSetup(
    worktree: string,
    branch: string,
    input: z.output<typeof PrepareWorktreeInputSchema>,
  ) {
    const logs: string[] = [];
    for (const [index, argv] of input.setup.entries()) {
      const logPath = setupLogPath(branch, index);
      logs.push(logPath);
      await fs.mkdir(path.dirname(logPath), { recursive: true });
      await fs.writeFile(logPath, `$ ${JSON.stringify(argv)}\n# cwd: ${worktree}\n`);
      let run: Awaited<ReturnType<typeof runProcess>>;
      try {
        run = await runProcess({
          argv,
          cwd: worktree,
          env: commandEnvironment(process.env, input.env, input.passEnv), // never the worker's secrets
          outputPath: logPath,
          timeoutMs: input.setupTimeoutMs,
          signal: asyncLocalStorage.getStore()?.cancellationSignal,
          onProgress: (p) => asyncLocalStorage.getStore()?.heartbeat({ step: 'setup', argv, ...p }),
          progressIntervalMs: 5000,
        });
      } catch (err) {
        throw fail(
          'SetupFailed',
          `Setup command ${JSON.stringify(argv)} could not start: ${(err as Error).message}`,
        );
      }
      if (run.aborted) throw new CancelledFailure(`setup of ${worktree} cancelled`);
      if (run.exitCode !== 0) {
        const why = run.timedOut
          ? `timed out after ${input.setupTimeoutMs} ms`
          : `exited ${run.exitCode ?? run.signal}`;
        throw ApplicationFailure.retryable(
          `Setup command ${JSON.stringify(argv)} ${why} in ${worktree} (log: ${logPath}):\n${run.tail.slice(-OUTPUT_TAIL)}`,
          'SetupFailed',
        );
      }
    }
    return logs;
  }

  async function conflictMarkerFiles(worktree: string): Promise<string[]> {
    const candidates = new Set([
      ...(await unmergedFiles(worktree)),
      ...splitZ(await runGit(worktree, ['diff', '--name-only', '-z', 'HEAD'])),
      ...splitZ(await runGit(worktree, ['ls-files', '-z', '--others', '--exclude-standard'])),
    ]);
    const marked: string[] = [];
    for (const file of [...candidates].sort()) {
      const content = await fs.readFile(path.join(worktree, file)).catch(() => null);
      if (!content || content.includes(0)) continue; // deleted or binary
      if (/^(<{7}|>{7})( |$)/m.test(content.toString('utf8'))) marked.push(file);
    }
    return marked;
  }

  async function sagaWorktrees(repoTop: string, name: string) {
    const prefix = `saga/${name}/`;
    const entries = (await listWorktrees(repoTop)).filter((e) => e.branch?.startsWith(prefix));
    return Promise.all(
      entries.map(async (e) => {
        const dirty = e.exists ? await dirtyFiles(e.path) : [];
        return { ...e, dirtyFiles: dirty };
      }),
    );
  }

  return {
    /** Where the saga starts from: the repo's toplevel, base branch and commit, and whether it is clean. */
    async checkRepo(raw: z.input<typeof CheckRepoInputSchema>) {
      const input = parseInput('checkRepo', CheckRepoInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      let base = input.base;
      if (!base) {
        const out = await execGit(repo, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
        if (out.code !== 0) {
          throw fail('NoBaseBranch', `'${repo}' is on a detached HEAD: name the base branch explicitly`);
        }
        base = out.stdout.trim();
      }
      const baseCommit = await resolveCommit(repo, base);
      if (!baseCommit) {
        throw fail('UnknownBase', `Base '${base}' does not name a commit in '${repo}' (is the repo empty?)`);
      }
      const dirty = await dirtyFiles(repo);
      return {
        repo,
        base,
        baseCommit,
        clean: dirty.length === 0,
        dirtyFiles: listedPaths(dirty),
        dirtyFileCount: dirty.length,
      };
    },

    /** The task's own worktree and branch; idempotent, setup runs once per created worktree. */
    async prepareWorktree(raw: z.input<typeof PrepareWorktreeInputSchema>) {
      const input = parseInput('prepareWorktree', PrepareWorktreeInputSchema, raw);
      const notes: string[] = [];
      const repoTop = path.resolve(input.repo);
      const added = await addNewWorktree(repoTop, input.branch, input.worktree, input.base, notes);
      const { baseCommit, created } =
        added ??
        (await ensureWorktree(
          await repoToplevel(input.repo),
          input.branch,
          input.worktree,
          input.base,
          notes,
        ));
      let setupPending = false;
      let marker = '';
      if (input.copyFiles.length > 0 || input.setup.length > 0) {
        // The marker survives a crash between `worktree add` and the end of setup, so a retry finishes setup.
        marker = path.join(
          (await runGit(input.worktree, ['rev-parse', '--absolute-git-dir'])).trim(),
          SETUP_PENDING_MARKER,
        );
        if (created) await fs.writeFile(marker, new Date().toISOString());
        setupPending = await pathExists(marker);
      }
      let copy = { copied: [] as string[], skipped: [] as string[] };
      let setupLogs: string[] = [];
      if (setupPending) {
        if (!created) notes.push('finished copy and setup left incomplete by an earlier attempt');
        copy = await copyIgnoredFiles(repoTop, input.worktree, input.copyFiles);
        setupLogs = await runSetup(input.worktree, input.branch, input);
        await fs.rm(marker, { force: true });
      }
      return {
        worktree: input.worktree,
        branch: input.branch,
        baseCommit,
        head: added ? baseCommit : await headOf(input.worktree),
        created,
        reused: !created,
        copiedFiles: copy.copied,
        skippedFiles: copy.skipped,
        setupRan: setupPending && input.setup.length > 0,
        setupLogs,
        notes,
      };
    },

    /**
     * The durable handoff: commit everything in the worktree onto the task branch; nothing to commit is not
     * an error. Never commits a `worktree.copy` path, nor more than the configured files and sizes, and runs
     * the user's commit hooks unless the config says to skip them.
     */
    async commitHandoff(raw: z.input<typeof CommitHandoffInputSchema>) {
      const input = parseInput('commitHandoff', CommitHandoffInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const notes: string[] = [];
      if (input.branch) await returnToTaskBranch(worktree, input.branch, input.exclude, notes);
      const [previousHead, id, staged] = await Promise.all([
        headOf(worktree),
        identityArgs(worktree),
        stageWork(worktree, input.exclude, notes),
      ]);
      // `a...b` diffs from the merge base, so a base the branch has moved away from still works.
      const from = input.baseCommit ?? previousHead;
      if (input.exclude.length > 0 && from !== previousHead) {
        const earlier = splitZ(await runGit(worktree, ['diff', '--name-only', '-z', `${from}...HEAD`]));
        const committedCopies = earlier.filter((f) => matchesCopyEntry(f, input.exclude));
        if (committedCopies.length > 0) {
          throw fail(
            'CopiedFileCommitted',
            `The agent committed ${samplePaths(committedCopies)} in '${worktree}', a worktree.copy file ` +
              '(often a secret); the handoff does not hand that on. Nothing more was committed',
          );
        }
      }
      await enforceHandoffLimits(worktree, staged, input);
      const committed = staged.length > 0;
      if (committed) {
        const args = [
          ...id,
          'commit',
          ...(input.skipHooks ? ['--no-verify'] : []),
          '-q',
          '-m',
          input.message,
        ];
        const out = await runGitRaw(worktree, args, notes);
        if (out.code !== 0 && input.skipHooks) throw new GitError(args, worktree, out.code, out.stderr);
        if (out.code !== 0) {
          const said = (out.stderr || out.stdout).trim().slice(-OUTPUT_TAIL);
          await execGit(worktree, ['reset', '-q']);
          throw fail(
            'CommitRefused',
            `The handoff commit in '${worktree}' was refused (exit ${out.code}; a commit hook?): ${said}. ` +
              'Nothing was committed; fix what the hook reports, or set handoff.skip_hooks: true',
          );
        }
      }
      const [commit, changed] = await Promise.all([
        committed ? headOf(worktree) : previousHead,
        from === previousHead && !committed
          ? ''
          : runGit(worktree, ['diff', '--name-only', '-z', `${from}...HEAD`]),
      ]);
      const changedFiles = splitZ(changed);
      return {
        commit,
        committed,
        changedFiles: listedPaths(changedFiles),
        changedFileCount: changedFiles.length,
        notes,
      };
    },

    /** Removes a task worktree only when nothing uncommitted is inside (partial-result rule). */
    async removeWorktree(raw: z.input<typeof RemoveWorktreeInputSchema>) {
      const input = parseInput('removeWorktree', RemoveWorktreeInputSchema, raw);
      const notes: string[] = [];
      // Without --force git itself refuses a worktree with changes or untracked files, and the main
      // checkout; any refusal takes the careful path below, which names the reason.
      if (await pathExists(input.worktree)) {
        const quick = await runGitRaw(input.repo, ['worktree', 'remove', input.worktree], notes);
        if (quick.code === 0) return { removed: true, notes };
      }
      const repoTop = await repoToplevel(input.repo);
      const target = await canonical(input.worktree);
      const entry = (await pruneIfStale(repoTop, notes)).find((e) => e.canonicalPath === target);
      if (!entry) {
        if (await pathExists(input.worktree)) {
          throw fail(
            'NotAWorktree',
            `'${input.worktree}' is not a worktree of '${repoTop}'; not removing it`,
          );
        }
        return { removed: false, notes };
      }
      if (entry.main) throw fail('NotAWorktree', `'${input.worktree}' is the repository's main checkout`);
      const dirty = (await dirtyFiles(entry.path)).filter((f) => !matchesCopyEntry(f, input.copies));
      if (dirty.length > 0) {
        throw ApplicationFailure.nonRetryable(
          `Worktree '${input.worktree}' has uncommitted changes (${samplePaths(dirty, 20)}); ` +
            'commit a handoff before removing it',
          'UncommittedWork',
          { dirtyFiles: listedPaths(dirty), dirtyFileCount: dirty.length },
        );
      }
      await runGit(repoTop, ['worktree', 'remove', '--force', entry.path], notes);
      await runGit(repoTop, ['worktree', 'prune'], notes);
      return { removed: true, notes };
    },

    /** The milestone integration worktree: branch from base when missing, reused otherwise. */
    async ensureIntegrationWorktree(raw: z.input<typeof EnsureIntegrationWorktreeInputSchema>) {
      const input = parseInput('ensureIntegrationWorktree', EnsureIntegrationWorktreeInputSchema, raw);
      const notes: string[] = [];
      const repoTop = await repoToplevel(input.repo);
      const { created } = await ensureWorktree(repoTop, input.branch, input.worktree, input.base, notes);
      return {
        worktree: input.worktree,
        branch: input.branch,
        head: await headOf(input.worktree),
        created,
        notes,
      };
    },

    /** Merges a task branch; a conflict leaves the merge in progress for a resolver agent. */
    async mergeBranch(raw: z.input<typeof MergeBranchInputSchema>) {
      const input = parseInput('mergeBranch', MergeBranchInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const notes: string[] = [];
      const [branchCommit, pending, before, id] = await Promise.all([
        requireCommit(worktree, input.branch, 'UnknownBranch', 'Branch'),
        mergeHead(worktree),
        headOf(worktree),
        identityArgs(worktree),
      ]);
      if (pending) {
        if (pending !== branchCommit) {
          throw fail(
            'MergeInProgress',
            `Another merge (${pending.slice(0, 12)}) is in progress in '${worktree}'`,
          );
        }
        // A retry of the same merge: report the conflict again.
        const conflictedFiles = await unmergedFiles(worktree);
        return { status: 'conflict' as const, head: await headOf(worktree), conflictedFiles, notes };
      }
      // Merging a commit HEAD already contains succeeds and leaves HEAD where it was.
      const args = [...id, 'merge', '--no-ff', '--no-edit', '--no-verify', '-m', input.message, branchCommit];
      const out = await runGitRaw(worktree, args, notes);
      const head = await headOf(worktree);
      if (out.code === 0) {
        const status = head === before ? ('already-merged' as const) : ('merged' as const);
        return { status, head, conflictedFiles: [], notes };
      }
      const conflictedFiles = await unmergedFiles(worktree);
      if ((await mergeHead(worktree)) && conflictedFiles.length > 0) {
        return { status: 'conflict' as const, head, conflictedFiles, notes };
      }
      throw fail('MergeFailed', new GitError(args, worktree, out.code, out.stderr || out.stdout).message);
    },

    /** Finishes a resolved merge; refuses while conflict markers remain. */
    async completeMerge(raw: z.input<typeof CompleteMergeInputSchema>) {
      const input = parseInput('completeMerge', CompleteMergeInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const notes: string[] = [];
      const remainingMarkers = await conflictMarkerFiles(worktree);
      if (remainingMarkers.length > 0) {
        return { ok: false, remainingMarkers, head: await headOf(worktree), committed: false, notes };
      }
      await runGit(worktree, ['add', '-A'], notes);
      const merging = (await mergeHead(worktree)) !== null;
      const staged = (await runGitRaw(worktree, ['diff', '--cached', '--quiet'], notes)).code === 1;
      if (merging || staged) {
        const id = await identityArgs(worktree);
        await runGit(worktree, [...id, 'commit', '--no-verify', '-q', '-m', input.message], notes);
      }
      return {
        ok: true,
        remainingMarkers,
        head: await headOf(worktree),
        committed: merging || staged,
        notes,
      };
    },

    async abortMerge(raw: z.input<typeof WorktreeInputSchema>) {
      const input = parseInput('abortMerge', WorktreeInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const aborted = (await mergeHead(worktree)) !== null;
      if (aborted) await runGit(worktree, ['merge', '--abort']);
      return { aborted, head: await headOf(worktree) };
    },

    /**
     * Reverts the integration worktree to the pre-integration commit. Task branches and commits stay in git.
     * Only saga branches are reset, so a wrong path can never discard the user's own work.
     */
    async resetHard(raw: z.input<typeof ResetHardInputSchema>) {
      const input = parseInput('resetHard', ResetHardInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const commit = await requireCommit(worktree, input.commit, 'UnknownCommit', 'Commit');
      const branch = (await execGit(worktree, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
      if (!branch.startsWith('saga/')) {
        throw fail(
          'NotASagaBranch',
          `Refusing to reset '${worktree}': it is on '${branch || 'detached HEAD'}'`,
        );
      }
      const notes: string[] = [];
      const previousHead = await headOf(worktree);
      await runGit(worktree, ['reset', '--hard', '-q', commit], notes);
      await runGit(worktree, ['clean', '-fdq'], notes);
      return { head: await headOf(worktree), previousHead, notes };
    },

    /**
     * Moves a task branch to `to` (e.g. the integrated state it must be redone on), keeping its old tip under
     * `archiveRef` so no work is lost. Idempotent: a retry finds the archive already written and the branch
     * already moved. Refuses while the branch is checked out in a worktree.
     */
    async resetTaskBranch(raw: z.input<typeof ResetTaskBranchInputSchema>) {
      const input = parseInput('resetTaskBranch', ResetTaskBranchInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      await assertValidBranchName(repo, input.branch);
      const notes: string[] = [];
      const to = await requireCommit(repo, input.to, 'UnknownCommit', 'Target');
      const checkedOut = (await pruneIfStale(repo, notes)).find((e) => e.branch === input.branch);
      if (checkedOut) {
        throw fail('BranchCheckedOut', `Branch '${input.branch}' is checked out at '${checkedOut.path}'`);
      }
      const previous = await branchHead(repo, input.branch);
      const archived = await resolveCommit(repo, input.archiveRef);
      if (previous && previous !== to && !archived) {
        await runGit(repo, ['update-ref', input.archiveRef, previous, ''], notes);
      }
      if (previous !== to) await runGit(repo, ['update-ref', `refs/heads/${input.branch}`, to], notes);
      return { branch: input.branch, head: to, previousHead: previous, archiveRef: input.archiveRef, notes };
    },

    async headCommit(raw: z.input<typeof WorktreeInputSchema>) {
      const input = parseInput('headCommit', WorktreeInputSchema, raw);
      const worktree = await requireWorktreeDir(input.worktree);
      const branch = (await execGit(worktree, ['symbolic-ref', '--quiet', '--short', 'HEAD'])).stdout.trim();
      return { commit: await headOf(worktree), branch: branch || null };
    },

    async isAncestor(raw: z.input<typeof IsAncestorInputSchema>) {
      const input = parseInput('isAncestor', IsAncestorInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      const commit = await requireCommit(repo, input.commit, 'UnknownCommit', 'Commit');
      const of = await requireCommit(repo, input.of, 'UnknownCommit', 'Commit');
      return { ancestor: await isAncestorCommit(repo, commit, of) };
    },

    /** Worktrees whose branch belongs to the saga (`saga/<name>/...`). */
    async listSagaWorktrees(raw: z.input<typeof SagaWorktreesInputSchema>) {
      const input = parseInput('listSagaWorktrees', SagaWorktreesInputSchema, raw);
      const entries = await sagaWorktrees(await repoToplevel(input.repo), input.sagaName);
      return entries.map((e) => ({
        path: e.path,
        branch: e.branch ?? '',
        dirty: e.dirtyFiles.length > 0,
        exists: e.exists,
      }));
    },

    /** Removes the saga's clean worktrees; dirty ones are kept (unless forced) and reported. */
    async cleanupSagaWorktrees(raw: z.input<typeof CleanupSagaWorktreesInputSchema>) {
      const input = parseInput('cleanupSagaWorktrees', CleanupSagaWorktreesInputSchema, raw);
      const repoTop = await repoToplevel(input.repo);
      const notes: string[] = [];
      await pruneIfStale(repoTop, notes);
      const removed: string[] = [];
      const kept: { path: string; reason: string }[] = [];
      for (const e of await sagaWorktrees(repoTop, input.sagaName)) {
        if (e.main) {
          kept.push({ path: e.path, reason: 'the repository main checkout is never removed' });
        } else if (e.dirtyFiles.length > 0 && !input.force) {
          kept.push({ path: e.path, reason: `uncommitted changes: ${e.dirtyFiles.slice(0, 10).join(', ')}` });
        } else {
          await runGit(repoTop, ['worktree', 'remove', '--force', e.path], notes);
          removed.push(e.path);
        }
      }
      if (removed.length > 0) await runGit(repoTop, ['worktree', 'prune'], notes);
      return { removed, kept, notes };
    },

    /** What git says about each task, for continuing a saga; differences from the record are listed. */
    async reconcileGit(raw: z.input<typeof ReconcileGitInputSchema>) {
      const input = parseInput('reconcileGit', ReconcileGitInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      const discrepancies: string[] = [];
      const integrationHead = await branchHead(repo, input.integrationBranch);
      const worktrees = await sagaWorktrees(repo, input.sagaName);
      const tasks = [];
      for (const task of input.tasks) {
        const head = await branchHead(repo, task.branch);
        const commit = task.commit ? await resolveCommit(repo, task.commit) : null;
        const wt = worktrees.find((w) => w.branch === task.branch);
        const subject = commit ?? (task.commit ? null : head);
        const merged = !!(
          subject &&
          integrationHead &&
          (await isAncestorCommit(repo, subject, integrationHead))
        );
        const short = task.commit?.slice(0, 12);
        if (task.commit && !head) discrepancies.push(`${task.key}: branch '${task.branch}' is missing`);
        if (task.commit && !commit) {
          discrepancies.push(`${task.key}: recorded commit ${short} does not exist in the repository`);
        }
        if (commit && head && commit !== head) {
          discrepancies.push(
            (await isAncestorCommit(repo, commit, head))
              ? `${task.key}: branch '${task.branch}' has commits after the recorded handoff ${short}`
              : `${task.key}: branch '${task.branch}' does not contain the recorded commit ${short}`,
          );
        }
        if (task.expectMerged && !merged) {
          discrepancies.push(
            `${task.key}: recorded as integrated but not merged into '${input.integrationBranch}'`,
          );
        }
        if (wt && !wt.exists) {
          discrepancies.push(`${task.key}: worktree '${wt.path}' is registered but its folder is missing`);
        }
        if (wt && wt.dirtyFiles.length > 0) {
          discrepancies.push(`${task.key}: worktree '${wt.path}' has uncommitted changes`);
        }
        tasks.push({
          key: task.key,
          branch: task.branch,
          branchExists: head !== null,
          branchHead: head,
          commitExists: commit !== null,
          mergedIntoIntegration: merged,
          worktreeExists: !!wt?.exists,
          worktreePath: wt?.path ?? null,
          worktreeDirty: !!wt && wt.dirtyFiles.length > 0,
        });
      }
      const known = new Set([...input.tasks.map((t) => t.branch), input.integrationBranch]);
      for (const w of worktrees.filter((w) => !known.has(w.branch ?? ''))) {
        discrepancies.push(`worktree '${w.path}' (branch '${w.branch}') belongs to no known task`);
      }
      return {
        tasks,
        integrationBranchExists: integrationHead !== null,
        integrationHead,
        discrepancies,
      };
    },

    /** Moves the base branch to the integrated result, only as a fast-forward. */
    async fastForwardBase(raw: z.input<typeof FastForwardBaseInputSchema>) {
      const input = parseInput('fastForwardBase', FastForwardBaseInputSchema, raw);
      const repo = await repoToplevel(input.repo);
      const baseHead = await branchHead(repo, input.base);
      const target = await branchHead(repo, input.integrationBranch);
      if (!baseHead) return { ok: false, reason: `base branch '${input.base}' does not exist` };
      if (!target)
        return { ok: false, reason: `integration branch '${input.integrationBranch}' does not exist` };
      if (baseHead === target) return { ok: true, reason: 'already up to date' };
      if (!(await isAncestorCommit(repo, baseHead, target))) {
        return {
          ok: false,
          reason: `'${input.base}' has moved on: it is not an ancestor of the integration`,
        };
      }
      const checkedOut = (await listWorktrees(repo)).find((e) => e.branch === input.base);
      if (checkedOut) {
        // Moving the ref under a checkout would desynchronise its files: let git fast-forward it instead.
        const out = await runGitRaw(checkedOut.path, ['merge', '--ff-only', '-q', target]);
        if (out.code !== 0) {
          return { ok: false, reason: `fast-forward in '${checkedOut.path}' failed: ${out.stderr.trim()}` };
        }
      } else {
        await runGit(repo, ['update-ref', `refs/heads/${input.base}`, target, baseHead]);
      }
      return { ok: true, reason: `fast-forwarded '${input.base}' to ${target.slice(0, 12)}` };
    },
  };
}

export type GitActivities = ReturnType<typeof createGitActivities>;
