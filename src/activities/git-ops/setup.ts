/** A new task worktree's preparation: the `worktree.copy` files, then the configured setup commands. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { z } from 'zod';
import { commandEnvironment } from '../../domain/config/agent-env';
import { SAGA_BRANCH_PREFIX, slugify } from '../../domain/contract/naming';
import { commandSandbox, runConfined } from '../sandbox';
import { isInside, pathExists } from './paths';
import { fail } from './queries';
import { execGit, GitError, OUTPUT_TAIL } from './run';
import type { SetUpWorktreeInputSchema } from './schemas';

/** `saga/<name>/<rest>`. */
const SAGA_BRANCH_PATTERN = new RegExp(`^${SAGA_BRANCH_PREFIX}([^/]+)/(.+)$`);

/** The saga's own folder, when the branch names the saga. */
function sagaDirOf(sagaHome: string, branch: string): string | undefined {
  const m = SAGA_BRANCH_PATTERN.exec(branch);
  return m ? path.join(sagaHome, slugify(m[1], 63)) : undefined;
}

/** Setup logs go under the saga's own `runs/` folder when the branch names the saga. */
function setupLogPath(sagaHome: string, branch: string, index: number): string {
  const m = SAGA_BRANCH_PATTERN.exec(branch);
  const dir = path.join(sagaDirOf(sagaHome, branch) ?? sagaHome, 'runs', 'setup');
  return path.join(dir, `${slugify(m ? m[2] : branch, 60)}-${index + 1}.log`);
}

export async function copyIgnoredFiles(repoTop: string, worktree: string, files: string[]) {
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
    await refuseSymlinkedFolder(worktree, rel, target);
    if ((await fs.lstat(target).catch(() => null))?.isSymbolicLink() || (await pathExists(target))) {
      skipped.push(rel); // tracked files are already checked out; never overwrite
      continue;
    }
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.cp(source, target, { recursive: true, force: false, errorOnExist: false });
    copied.push(rel);
  }
  return { copied, skipped };
}

/**
 * The worktree is a checkout of the base, where a symlinked folder may be committed (an agent's earlier
 * work): a copy written through it would land wherever it points (the user's ~/.ssh, another repo).
 * Every existing folder on the way to `target` must be a real folder inside the worktree.
 */
async function refuseSymlinkedFolder(worktree: string, rel: string, target: string): Promise<void> {
  const folders = path.relative(worktree, path.dirname(target)).split(path.sep).filter(Boolean);
  let current = worktree;
  for (const folder of folders) {
    current = path.join(current, folder);
    const stat = await fs.lstat(current).catch(() => null);
    if (!stat) return; // from here on mkdir makes real folders
    if (stat.isSymbolicLink() || !stat.isDirectory()) {
      throw fail(
        'CopyThroughSymlink',
        `worktree.copy entry '${rel}' would be written through '${path.relative(worktree, current)}' in ` +
          `'${worktree}', which is ${stat.isSymbolicLink() ? 'a symlink (committed in the repository)' : 'not a folder'}; ` +
          'nothing was copied there: remove the symlink from the base branch or the entry from worktree.copy',
      );
    }
  }
}

export async function runSetup(
  sagaHome: string,
  worktree: string,
  branch: string,
  input: z.output<typeof SetUpWorktreeInputSchema>,
) {
  const logs: string[] = [];
  for (const [index, argv] of input.setup.entries()) {
    const logPath = setupLogPath(sagaHome, branch, index);
    logs.push(logPath);
    await fs.mkdir(path.dirname(logPath), { recursive: true });
    await fs.writeFile(logPath, `$ ${JSON.stringify(argv)}\n# cwd: ${worktree}\n`);
    let run: Awaited<ReturnType<typeof runConfined>>;
    try {
      run = await runConfined(commandSandbox(input.sandbox, sagaHome, sagaDirOf(sagaHome, branch)), {
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
