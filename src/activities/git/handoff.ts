/**
 * The durable handoff: everything the agent left in a task worktree becomes one commit on the task branch,
 * guarded so it never lands on another branch, never commits a `worktree.copy` path and stays within the
 * configured file count and sizes.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { canonical, copyEntryPath, listedPaths, matchesCopyEntry, samplePaths } from './paths';
import {
  branchHead,
  fail,
  headOf,
  isAncestorCommit,
  requireWorktreeDir,
  splitZ,
  unmergedFiles,
} from './queries';
import os from 'node:os';
import { commandEnvironment } from '../../domain/config/agent-env';
import { CommandSandboxSchema } from '../../domain/config/sandbox';
import { commandSandbox, runConfined } from '../sandbox';
import { execGit, GitError, identityArgs, OUTPUT_TAIL, runGit, runGitRaw } from './run';
import { CommitHandoffInputSchema, parseInput } from './schemas';
import { listWorktrees } from './worktrees';

/** What `git add -A` staged: every path, and those whose new content is written (added, modified, type). */
interface StagedWork {
  paths: string[];
  written: Set<string>;
}

/** Staged paths with their status in one git call (renames as delete + add, so every path is listed). */
async function stagedWork(worktree: string): Promise<StagedWork> {
  const tokens = splitZ(await runGit(worktree, ['diff', '--cached', '--name-status', '-z', '--no-renames']));
  const paths: string[] = [];
  const written = new Set<string>();
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const [status, file] = [tokens[i]!, tokens[i + 1]!];
    paths.push(file);
    if (/^[AMT]/.test(status)) written.add(file);
  }
  return { paths, written };
}

/**
 * Stages all the work in a worktree but `worktree.copy` paths (taken out again when the agent un-ignored or
 * force-added them; the files stay in the worktree).
 */
async function stageWork(worktree: string, copies: readonly string[], notes: string[]): Promise<StagedWork> {
  await runGit(worktree, ['add', '-A'], notes);
  const staged = await stagedWork(worktree);
  const caught = staged.paths.filter((f) => matchesCopyEntry(f, copies));
  if (caught.length === 0) return staged;
  const entries = copies
    .map(copyEntryPath)
    .filter((e) => e !== '' && caught.some((f) => matchesCopyEntry(f, [e])));
  await runGit(worktree, ['reset', '-q', '--', ...entries.map((e) => `:(literal)${e}`)], notes);
  notes.push(`not committed (worktree.copy): ${samplePaths(caught)}`);
  const kept = staged.paths.filter((f) => !matchesCopyEntry(f, copies));
  return { paths: kept, written: new Set(kept.filter((f) => staged.written.has(f))) };
}

/**
 * Puts a task worktree back on its branch when the agent checked out another branch or detached HEAD,
 * keeping the agent's work: commits it made on a detached HEAD and whatever it left uncommitted. A detached
 * HEAD that only went forward from the branch moves the branch there; anything else is cherry-picked onto
 * the branch (the work is kept under refs/saga-archive/ meanwhile). No other ref is ever moved. Fails
 * without committing when the worktree is not this task's or the work does not apply to the branch.
 * `headRef` is what HEAD points at now (empty when detached), never the task branch itself.
 */
async function returnToTaskBranch(
  worktree: string,
  branch: string,
  headRef: string,
  exclude: readonly string[],
  notes: string[],
): Promise<void> {
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
  { paths: staged, written }: StagedWork,
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

/** What a handoff commit left: whether it committed, and where the task's own changes start. */
export interface CommittedWork {
  committed: boolean;
  /** HEAD before the commit. */
  previousHead: string;
  /** The start of the task's changes (the base commit, or the previous HEAD). */
  from: string;
  notes: string[];
}

/**
 * Commits everything in the worktree onto the task branch; nothing to commit is not an error. Never commits
 * a `worktree.copy` path, nor more than the configured files and sizes, and runs the user's commit hooks
 * unless the config says to skip them.
 */
export async function commitWork(raw: z.input<typeof CommitHandoffInputSchema>): Promise<CommittedWork> {
  const input = parseInput('commitHandoff', CommitHandoffInputSchema, raw);
  const worktree = await requireWorktreeDir(input.worktree);
  const notes: string[] = [];
  // Read together: where HEAD points, its commit and the committer identity (one round of processes).
  const [headRef, headBefore, id] = await Promise.all([
    execGit(worktree, ['symbolic-ref', '--quiet', 'HEAD']).then((out) => out.stdout.trim()),
    headOf(worktree),
    identityArgs(worktree),
  ]);
  let previousHead = headBefore;
  if (input.branch && headRef !== `refs/heads/${input.branch}`) {
    await returnToTaskBranch(worktree, input.branch, headRef, input.exclude, notes);
    previousHead = await headOf(worktree);
  }
  const staged = await stageWork(worktree, input.exclude, notes);
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
  const committed = staged.paths.length > 0;
  if (committed) {
    // The worker's git runs no hook (SAFE_GIT_CONFIG); the user's pre-commit runs confined, when asked.
    const refused = input.skipHooks ? null : await preCommitRefusal(worktree);
    const args = [...id, 'commit', '--no-verify', '-q', '-m', input.message];
    const out = refused ? null : await runGitRaw(worktree, args, notes);
    if (out && out.code !== 0) throw new GitError(args, worktree, out.code, out.stderr);
    if (refused !== null) {
      await execGit(worktree, ['reset', '-q']);
      throw fail(
        'CommitRefused',
        `The handoff commit in '${worktree}' was refused by the repository's pre-commit hook: ${refused}. ` +
          'Nothing was committed; fix what the hook reports, or set handoff.run_hooks: false',
      );
    }
  }
  return { committed, previousHead, from, notes };
}

/**
 * The handed-off commit (`tip`: HEAD in the worktree, or the task branch read from the repository, which
 * lets the worktree's removal run meanwhile) and the files the task changed since `from`.
 */
export async function handedOff(cwd: string, tip: string, work: CommittedWork) {
  const [commit, changed] = await Promise.all([
    runGit(cwd, ['rev-parse', '--verify', '--end-of-options', `${tip}^{commit}`]).then((out) => out.trim()),
    work.from === work.previousHead && !work.committed
      ? ''
      : runGit(cwd, ['diff', '--name-only', '-z', `${work.from}...${tip}`]),
  ]);
  const changedFiles = splitZ(changed);
  return {
    commit,
    committed: work.committed,
    changedFiles: listedPaths(changedFiles),
    changedFileCount: changedFiles.length,
    notes: work.notes,
  };
}

export function createHandoffActivities() {
  return {
    /** The durable handoff's commit (see commitWork), and what it handed off. */
    async commitHandoff(raw: z.input<typeof CommitHandoffInputSchema>) {
      const work = await commitWork(raw);
      return handedOff(raw.worktree, 'HEAD', work);
    },
  };
}

/**
 * Runs the repository's pre-commit hook (its common git dir's `hooks/`) confined like an agent, as the
 * hook may be an agent's work; returns what it said when it refused, or null (passed, or no hook).
 */
async function preCommitRefusal(worktree: string): Promise<string | null> {
  const common = path.resolve(worktree, (await runGit(worktree, ['rev-parse', '--git-common-dir'])).trim());
  const hook = path.join(common, 'hooks', 'pre-commit');
  const stat = await fs.stat(hook).catch(() => null);
  if (!stat?.isFile() || (stat.mode & 0o111) === 0) return null;
  const outputPath = path.join(os.tmpdir(), `saga-hook-${process.pid}-${Date.now()}.log`);
  try {
    const run = await runConfined(commandSandbox(CommandSandboxSchema.parse({})), {
      argv: [hook],
      cwd: worktree,
      env: commandEnvironment(process.env),
      outputPath,
      timeoutMs: 5 * 60_000,
    });
    return run.exitCode === 0
      ? null
      : `exit ${run.exitCode ?? run.signal}: ${run.tail.trim().slice(-OUTPUT_TAIL)}`;
  } finally {
    await fs.rm(outputPath, { force: true });
  }
}
