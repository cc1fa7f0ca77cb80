/**
 * A fix task's branch landed on the delivery stack, in the user's repository with the worker's git and
 * without touching the user's working tree: the fix fast-forwards its delivery branch, each later delivery
 * branch gets the one below it merged in (a merge commit made with `git merge-tree --write-tree` and
 * `commit-tree`, so no checkout is needed), and the integration branch moves to the top of the stack.
 * Everything is computed first; only when every merge is clean are the branches moved, and only then pushed
 * (no force). A conflict moves and pushes nothing. A retry finds what a first attempt already moved (each
 * branch then already holds the one below it) and pushes again, which is a no-op for what the forge has.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import {
  branchHead,
  dirtyFiles,
  fail,
  isAncestorCommit,
  repoToplevel,
  requireCommit,
  splitZ,
} from '../git-ops/queries';
import { GitError, identityArgs, runGit, runGitRaw } from '../git-ops/run';
import { listWorktrees } from '../git-ops/worktrees';
import type { LandFixResult } from './delivery-activities';
import type { LandFixInputSchema } from './delivery-inputs';
import { readToken } from './gitea-client';
import { forgeRemoteUrl } from './open-pull-request';
import { pushBranch } from './push';

type LandFixInput = z.output<typeof LandFixInputSchema>;

/** One branch to move: a fast-forward from `from` to `to` (a merge commit has `from` as its first parent). */
interface Move {
  branch: string;
  from: string;
  to: string;
}

const short = (sha: string) => sha.slice(0, 12);

/**
 * The merge of `theirs` into `ours` (branch `into`), as a commit object no ref points at yet. A conflict
 * is a non-retryable failure naming both branches and the files.
 */
async function mergeCommit(
  repo: string,
  ours: { branch: string; sha: string },
  theirs: { branch: string; sha: string },
): Promise<string> {
  const args = ['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours.sha, theirs.sha];
  const out = await runGitRaw(repo, args);
  if (out.code === 1) {
    const files = splitZ(out.stdout).slice(1);
    throw ApplicationFailure.nonRetryable(
      `landFix: merging '${theirs.branch}' (${short(theirs.sha)}) into '${ours.branch}' (${short(ours.sha)}) ` +
        `conflicts in ${files.join(', ') || '(no file named)'}: no branch was moved or pushed`,
      'FixConflict',
    );
  }
  if (out.code !== 0) throw new GitError(args, repo, out.code, out.stderr || out.stdout);
  const tree = splitZ(out.stdout)[0]?.trim() ?? '';
  const message = `Merge ${theirs.branch} into ${ours.branch}\n\nThe fix landed below, carried up the stack by the saga.`;
  const id = await identityArgs(repo);
  const commit = await runGit(repo, [
    ...id,
    'commit-tree',
    tree,
    '-p',
    ours.sha,
    '-p',
    theirs.sha,
    '-m',
    message,
  ]);
  return commit.trim();
}

/** Where `below` must go so that `branch` (now at `current`) holds it: nowhere, or a merge commit. */
async function carry(
  repo: string,
  branch: string,
  current: string,
  below: { branch: string; sha: string },
): Promise<Move | null> {
  if (await isAncestorCommit(repo, below.sha, current)) return null;
  const to = await mergeCommit(repo, { branch, sha: current }, below);
  return { branch, from: current, to };
}

/** The commit the fix lands as on `stack[at]`, and every move that follows from it, computed and not made. */
async function planLanding(
  repo: string,
  input: LandFixInput,
): Promise<{ commit: string; moves: Move[]; tops: string[] }> {
  const fix = await requireCommit(repo, `refs/heads/${input.fixBranch}`, 'UnknownBranch', 'Fix branch');
  const heads: string[] = [];
  for (const entry of input.stack) {
    heads.push(await requireCommit(repo, `refs/heads/${entry.head}`, 'UnknownBranch', 'Delivery branch'));
  }
  const target = input.stack[input.at]!.head;
  const current = heads[input.at]!;
  const moves: Move[] = [];
  let commit = current; // the fix is already on its branch: a retry, or a fix that made no commit
  if (!(await isAncestorCommit(repo, fix, current))) {
    if (!(await isAncestorCommit(repo, current, fix))) {
      throw fail(
        'FixNotOnBranch',
        `landFix: the fix branch '${input.fixBranch}' (${short(fix)}) does not descend from '${target}' ` +
          `(${short(current)}): a fix must start from its delivery branch as it was pushed; nothing was moved`,
      );
    }
    commit = fix;
    moves.push({ branch: target, from: current, to: fix });
  }
  const tops = heads.slice(0, input.at).concat(commit);
  let below = { branch: target, sha: commit };
  for (let i = input.at + 1; i < input.stack.length; i++) {
    const branch = input.stack[i]!.head;
    const move = await carry(repo, branch, heads[i]!, below);
    if (move) moves.push(move);
    below = { branch, sha: move?.to ?? heads[i]! };
    tops.push(below.sha);
  }
  if (!input.stack.some((entry) => entry.head === input.integrationBranch)) {
    const integration = await branchHead(repo, input.integrationBranch);
    if (!integration) {
      throw fail(
        'UnknownBranch',
        `landFix: the integration branch '${input.integrationBranch}' does not exist`,
      );
    }
    // Usually a fast-forward; an integration branch that went on (a milestone not delivered yet) gets a merge.
    const move = (await isAncestorCommit(repo, integration, below.sha))
      ? { branch: input.integrationBranch, from: integration, to: below.sha }
      : await carry(repo, input.integrationBranch, integration, below);
    if (move && move.from !== move.to) moves.push(move);
  }
  return { commit, moves, tops };
}

/** A branch checked out somewhere is moved by git in that worktree, so its files follow; it must be clean. */
async function checkoutsOf(repo: string, moves: Move[]): Promise<Map<string, string>> {
  const checkouts = new Map<string, string>();
  const worktrees = await listWorktrees(repo);
  for (const move of moves) {
    const worktree = worktrees.find((w) => w.branch === move.branch && w.exists);
    if (!worktree) continue;
    const dirty = await dirtyFiles(worktree.path);
    if (dirty.length > 0) {
      throw fail(
        'BranchCheckedOut',
        `landFix: '${move.branch}' is checked out at '${worktree.path}' with changes (${dirty.slice(0, 5).join(', ')}): nothing was moved`,
      );
    }
    checkouts.set(move.branch, worktree.path);
  }
  return checkouts;
}

async function applyMoves(repo: string, moves: Move[], checkouts: Map<string, string>): Promise<void> {
  for (const move of moves) {
    const worktree = checkouts.get(move.branch);
    if (worktree) await runGit(worktree, ['merge', '--ff-only', '-q', move.to]);
    // The old value guards against a branch someone moved since the plan: git then refuses.
    else
      await runGit(repo, [
        'update-ref',
        '-m',
        'saga: land fix',
        `refs/heads/${move.branch}`,
        move.to,
        move.from,
      ]);
  }
}

/** See the file's comment. `input` is parsed (delivery-inputs.ts); `env` holds the token (forge.token_env). */
export async function landFixIn(input: LandFixInput, env: NodeJS.ProcessEnv): Promise<LandFixResult> {
  // A push that could never happen must not leave branches moved here: the token is asked for first.
  readToken(input.target, env);
  const repo = await repoToplevel(input.repo);
  const remoteUrl = await forgeRemoteUrl(repo, input.remote, input.target);
  const { commit, moves, tops } = await planLanding(repo, input);
  await applyMoves(repo, moves, await checkoutsOf(repo, moves));
  const heads: Record<string, string> = {};
  // Every branch from the fix up is pushed, moved now or by an attempt whose push did not finish.
  for (let i = input.at; i < input.stack.length; i++) {
    const branch = input.stack[i]!.head;
    await pushBranch({ repoDir: repo, remoteUrl, branch, tokenEnv: input.target.tokenEnv, env });
    heads[branch] = tops[i]!;
  }
  return { heads, commit };
}
