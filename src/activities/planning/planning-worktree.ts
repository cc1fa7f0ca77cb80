/**
 * The planning phase's scratch worktree: discovery's build/test/lint runs, the planner and
 * the plan reviewer work in a detached worktree of the base commit, never in the user's checkout. The state
 * of the main checkout (HEAD and `git status`) is recorded when the worktree is made and compared when
 * planning ends, so a change there is reported instead of passing unseen.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { zodIssueLines } from '../../domain/text/zod-errors';
import { runGit } from '../git';
import { runProcess } from '../process/process';

export interface CheckoutState {
  head: string;
  /** `git status --porcelain` of the main checkout, untracked files included. */
  status: string;
}

/** Where the before-state of the main checkout is kept (under the saga directory, never in the repo). */
export const checkoutStatePath = (sagaDir: string): string =>
  path.join(sagaDir, 'runs', 'discovery', 'main-checkout.json');

export async function readCheckoutState(repo: string): Promise<CheckoutState> {
  const [head, status] = await Promise.all([
    runGit(repo, ['rev-parse', 'HEAD']),
    runGit(repo, ['status', '--porcelain=v1', '--untracked-files=all']),
  ]);
  return { head: head.trim(), status };
}

/** What differs between two states of the main checkout; empty when it is unchanged. */
export function checkoutDifferences(before: CheckoutState, after: CheckoutState): string[] {
  const differences: string[] = [];
  if (before.head !== after.head) {
    differences.push(`HEAD moved from ${before.head.slice(0, 12)} to ${after.head.slice(0, 12)}`);
  }
  if (before.status !== after.status) {
    const lines = (s: string) => new Set(s.split('\n').filter(Boolean));
    const was = lines(before.status);
    const now = lines(after.status);
    const changed = [
      ...[...now].filter((l) => !was.has(l)).map((l) => `now: ${l}`),
      ...[...was].filter((l) => !now.has(l)).map((l) => `before: ${l}`),
    ];
    differences.push(`git status changed (${changed.slice(0, 20).join('; ')})`);
  }
  return differences;
}

const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

async function registeredWorktrees(repo: string): Promise<string[]> {
  const out = await runGit(repo, ['worktree', 'list', '--porcelain']);
  const paths = out
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));
  return Promise.all(paths.map((p) => fs.realpath(p).catch(() => path.resolve(p))));
}

/**
 * A detached worktree of `base` at `worktree`: reused when it is already a worktree of the repo (a retried
 * activity), created otherwise. Records the main checkout's state once, before anything runs.
 */
export async function ensurePlanningWorktree(input: {
  repo: string;
  worktree: string;
  base: string;
  sagaDir: string;
}): Promise<{ worktree: string; created: boolean }> {
  const repo = (await runGit(input.repo, ['rev-parse', '--show-toplevel'])).trim();
  const statePath = checkoutStatePath(input.sagaDir);
  if (!(await exists(statePath))) {
    await fs.mkdir(path.dirname(statePath), { recursive: true });
    await fs.writeFile(statePath, JSON.stringify(await readCheckoutState(repo), null, 2));
  }
  const target = await fs.realpath(input.worktree).catch(() => path.resolve(input.worktree));
  if (target === (await fs.realpath(repo))) {
    throw ApplicationFailure.nonRetryable(
      `The planning worktree '${input.worktree}' is the repository's own checkout`,
      'InvalidInput',
    );
  }
  if ((await exists(input.worktree)) && (await registeredWorktrees(repo)).includes(target)) {
    await copyInstalledModules(repo, input.worktree);
    return { worktree: input.worktree, created: false };
  }
  // A folder left by a crash between `worktree add` and its registration, or a deleted worktree still
  // registered: prune the registration; an occupied folder that is not ours is refused.
  await runGit(repo, ['worktree', 'prune']);
  if ((await exists(input.worktree)) && (await fs.readdir(input.worktree)).length > 0) {
    throw ApplicationFailure.nonRetryable(
      `'${input.worktree}' exists, is not empty and is not a worktree of '${repo}'`,
      'PathOccupied',
    );
  }
  await runGit(repo, ['worktree', 'add', '--detach', '--quiet', input.worktree, `${input.base}^{commit}`]);
  await copyInstalledModules(repo, input.worktree);
  return { worktree: input.worktree, created: true };
}

/**
 * The repo's installed toolchain (node_modules is never committed), copied into the scratch worktree: discovery
 * confirms `npm test`/`tsc` as they work in the repo without installing anything, and what those commands or
 * the planner write there (caches, an `npm install`) stays in the copy. A link would send those writes into
 * the user's checkout (or, confined, fail them). Made beside its place and renamed, so a retry after a crash
 * mid-copy starts over instead of using half a copy.
 */
async function copyInstalledModules(repo: string, worktree: string): Promise<void> {
  const source = path.join(repo, 'node_modules');
  const target = path.join(worktree, 'node_modules');
  if (!(await exists(source)) || (await fs.lstat(target).catch(() => null))) return;
  const partial = `${target}.saga-partial`;
  await fs.rm(partial, { recursive: true, force: true });
  await copyTree(source, partial);
  await fs.rename(partial, target);
}

/**
 * GNU cp copies a big tree several times faster than node's fs.cp, and shares the blocks where the file
 * system can (`--reflink=auto`: btrfs, XFS); it heartbeats the activity while it runs.
 */
async function copyTree(source: string, target: string): Promise<void> {
  if (process.platform !== 'linux') {
    await fs.cp(source, target, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    return;
  }
  const log = `${target}.log`;
  const run = await runProcess({
    argv: ['cp', '-a', '--reflink=auto', '--', source, target],
    cwd: path.dirname(target),
    outputPath: log,
    signal: asyncLocalStorage.getStore()?.cancellationSignal,
    onProgress: (p) => asyncLocalStorage.getStore()?.heartbeat({ step: 'copy node_modules', ...p }),
    progressIntervalMs: 5000,
  });
  await fs.rm(log, { force: true });
  if (run.aborted) throw new CancelledFailure('planning worktree cancelled while copying node_modules');
  if (run.exitCode !== 0) {
    throw ApplicationFailure.retryable(
      `Copying ${source} into the planning worktree failed (exit ${run.exitCode ?? run.signal}): ${run.tail.trim()}`,
      'CopyFailed',
    );
  }
}

export const FinishPlanningWorktreeInputSchema = z.object({
  repo: z.string().min(1, 'repo is required'),
  worktree: z.string().min(1, 'worktree is required'),
  sagaDir: z.string().min(1, 'sagaDir is required'),
});

export interface FinishPlanningWorktreeResult {
  removed: boolean;
  /** Null when no before-state was recorded (discovery did not make the worktree). */
  checkoutUnchanged: boolean | null;
  differences: string[];
}

/**
 * Planning is over: the scratch worktree goes (whatever the planner left in it is scratch), and the main
 * checkout is compared with its state before planning. Idempotent.
 */
export async function finishPlanningWorktree(
  raw: z.input<typeof FinishPlanningWorktreeInputSchema>,
): Promise<FinishPlanningWorktreeResult> {
  const parsed = FinishPlanningWorktreeInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = zodIssueLines(parsed.error, 'input');
    throw ApplicationFailure.nonRetryable(`finishPlanningWorktree: ${issues.join('; ')}`, 'InvalidInput');
  }
  const input = parsed.data;
  const repo = (await runGit(input.repo, ['rev-parse', '--show-toplevel'])).trim();
  const target = await fs.realpath(input.worktree).catch(() => path.resolve(input.worktree));
  let removed = false;
  if (target !== (await fs.realpath(repo)) && (await registeredWorktrees(repo)).includes(target)) {
    // A node_modules link lent by an earlier version goes first, as a link: nothing may reach the repo's own.
    const modules = path.join(input.worktree, 'node_modules');
    if ((await fs.lstat(modules).catch(() => null))?.isSymbolicLink()) await fs.unlink(modules);
    await runGit(repo, ['worktree', 'remove', '--force', '--force', input.worktree]);
    removed = true;
  }
  await runGit(repo, ['worktree', 'prune']);
  const before = await fs
    .readFile(checkoutStatePath(input.sagaDir), 'utf8')
    .then((text) => JSON.parse(text) as CheckoutState)
    .catch(() => null);
  if (!before) return { removed, checkoutUnchanged: null, differences: [] };
  const differences = checkoutDifferences(before, await readCheckoutState(repo));
  return { removed, checkoutUnchanged: differences.length === 0, differences };
}
