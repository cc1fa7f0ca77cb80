/**
 * The durable handoff: everything the agent left in a task worktree becomes one commit on the task branch,
 * guarded so it never lands on another branch, never commits a `worktree.copy` path and stays within the
 * configured file count and sizes.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { commandEnvironment } from '../../domain/config/agent-env';
import { CommandSandboxSchema } from '../../domain/config/sandbox';
import { commandSandbox, runConfined } from '../sandbox';
import { refuseNestedRepos } from './nested-repos';
import { listedPaths, matchesCopyEntry, samplePaths } from './paths';
import { fail, headOf, requireWorktreeDir, splitZ } from './queries';
import { returnToTaskBranch } from './return-to-branch';
import { execGit, GitError, identityArgs, OUTPUT_TAIL, runGit, runGitRaw } from './run';
import { CommitHandoffInputSchema, parseInput } from './schemas';
import { stageWork, type StagedWork } from './staging';

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

/** Refuses a handoff whose earlier commits (since `from`) hold a `worktree.copy` path. */
async function refuseCommittedCopies(
  worktree: string,
  from: string,
  exclude: readonly string[],
): Promise<void> {
  const earlier = splitZ(await runGit(worktree, ['diff', '--name-only', '-z', `${from}...HEAD`]));
  const committedCopies = earlier.filter((f) => matchesCopyEntry(f, exclude));
  if (committedCopies.length > 0) {
    throw fail(
      'CopiedFileCommitted',
      `The agent committed ${samplePaths(committedCopies)} in '${worktree}', a worktree.copy file ` +
        '(often a secret); the handoff does not hand that on. Nothing more was committed',
    );
  }
}

/** Commits what is staged (`args`), unless the user's pre-commit hook, run when asked, refuses it. */
async function commitStaged(
  worktree: string,
  args: string[],
  skipHooks: boolean,
  notes: string[],
): Promise<void> {
  // The worker's git runs no hook (SAFE_GIT_CONFIG); the user's pre-commit runs confined, when asked.
  const refused = skipHooks ? null : await preCommitRefusal(worktree);
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

/** What a handoff commit left: whether it committed, and where the task's own changes start. */
export interface CommittedWork {
  committed: boolean;
  /** HEAD before the commit. */
  previousHead: string;
  /** The start of the task's changes (the base commit, or the previous HEAD). */
  from: string;
  notes: string[];
  /** Set when the worktree holds a nested repository: nothing was staged or committed (nested-repos.ts). */
  refused: string | null;
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
  // Before anything reads the worktree's files: staging could run a nested repository's programs.
  const refused = await refuseNestedRepos(worktree, input.baseCommit ?? headBefore);
  if (refused !== null) {
    return { committed: false, previousHead: headBefore, from: headBefore, notes, refused };
  }
  let previousHead = headBefore;
  if (input.branch && headRef !== `refs/heads/${input.branch}`) {
    await returnToTaskBranch(worktree, input.branch, headRef, input.exclude, notes);
    previousHead = await headOf(worktree);
  }
  const staged = await stageWork(worktree, input.exclude, notes);
  // `a...b` diffs from the merge base, so a base the branch has moved away from still works.
  const from = input.baseCommit ?? previousHead;
  if (input.exclude.length > 0 && from !== previousHead) {
    await refuseCommittedCopies(worktree, from, input.exclude);
  }
  await enforceHandoffLimits(worktree, staged, input);
  const committed = staged.paths.length > 0;
  if (committed)
    await commitStaged(
      worktree,
      [...id, 'commit', '--no-verify', '-q', '-m', input.message],
      input.skipHooks,
      notes,
    );
  return { committed, previousHead, from, notes, refused: null };
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
    ...(work.refused !== null ? { refused: work.refused } : {}),
  };
}

/** The durable handoff's commit (see commitWork), and what it handed off. */
export async function commitHandoff(raw: z.input<typeof CommitHandoffInputSchema>) {
  const work = await commitWork(raw);
  return handedOff(raw.worktree, 'HEAD', work);
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
  // A folder of its own (0700, an unguessable name): a fixed name in the shared /tmp could be planted first,
  // as a symlink the log would be written through, by any local user.
  const logDir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-hook-'));
  const outputPath = path.join(logDir, 'pre-commit.log');
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
    await fs.rm(logDir, { recursive: true, force: true });
  }
}
