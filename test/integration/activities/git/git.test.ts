/**
 * Git activities against real repositories in temp folders. The machine's git config is hidden so that
 * commits only work thanks to the activities' own identity fallback.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fs, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createGitActivities, createTaskGitActivities } from '../../../../src/activities/git';
import { integrationBranch, taskBranch, worktreeDirName } from '../../../../src/domain/contract/naming';

const savedEnv = { ...process.env };
const scratch = mkdtempSync(path.join(os.tmpdir(), 'saga-git-home-'));
let root: string;
let repo: string;
let baseCommit: string;
const git = createGitActivities({ sagaHome: path.join(scratch, 'sagas') });

/** Runs git for test set-up; the test's own commits carry an explicit identity. */
function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function commitFile(cwd: string, file: string, content: string, message = `edit ${file}`): string {
  writeFileSync(path.join(cwd, file), content);
  sh(cwd, 'add', '-A');
  sh(cwd, 'commit', '-q', '-m', message);
  return sh(cwd, 'rev-parse', 'HEAD');
}

/** A task branch with one commit, made without a worktree. */
function branchWithFile(branch: string, file: string, content: string, from = 'main'): string {
  const wt = path.join(root, `tmp-${branch.replace(/\W/g, '-')}`);
  sh(repo, 'worktree', 'add', '-q', '-b', branch, wt, from);
  const commit = commitFile(wt, file, content);
  sh(repo, 'worktree', 'remove', '--force', wt);
  return commit;
}

const wtPath = (key: string) => path.join(root, worktreeDirName('demo', key));

beforeAll(() => {
  const globalConfig = path.join(scratch, 'empty-gitconfig');
  writeFileSync(globalConfig, '');
  Object.assign(process.env, { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: globalConfig, HOME: scratch });
  for (const name of ['XDG_CONFIG_HOME', 'EMAIL', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL'])
    delete process.env[name];
  for (const name of ['GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_DIR', 'GIT_WORK_TREE']) {
    delete process.env[name];
  }
});

afterAll(() => {
  process.env = savedEnv;
  rmSync(scratch, { recursive: true, force: true });
});

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'saga-git-'));
  repo = path.join(root, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  writeFileSync(path.join(repo, '.gitignore'), '.env\n');
  writeFileSync(path.join(repo, 'shared.txt'), 'line 1\nline 2\n');
  baseCommit = commitFile(repo, 'README.md', '# demo\n', 'initial');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('checkRepo', () => {
  it('reports toplevel, current branch, base commit and dirty files', async () => {
    const clean = await git.checkRepo({ repo: path.join(repo, '.') });
    expect(clean).toEqual({
      repo: await fs.realpath(repo),
      base: 'main',
      baseCommit,
      clean: true,
      dirtyFiles: [],
      dirtyFileCount: 0,
    });
    writeFileSync(path.join(repo, 'new.txt'), 'x');
    const dirty = await git.checkRepo({ repo, base: 'main' });
    expect(dirty).toMatchObject({ clean: false, dirtyFiles: ['new.txt'] });
  });

  it('rejects a folder that is not a git repository, without retries', async () => {
    const plain = path.join(root, 'plain');
    await fs.mkdir(plain);
    await expect(git.checkRepo({ repo: plain })).rejects.toMatchObject({
      type: 'NotAGitRepo',
      nonRetryable: true,
      message: expect.stringContaining('is not inside a git repository'),
    });
  });
});

describe('prepareWorktree', () => {
  const branch = taskBranch('demo', 1, 1, 'add-login');

  it('creates the task worktree, then reuses it without error', async () => {
    expect(branch).toBe('saga/demo/m1t1-add-login');
    const input = { repo, branch, worktree: wtPath('m1t1'), base: 'main', copyFiles: [], setup: [] };
    const first = await git.prepareWorktree(input);
    expect(first).toMatchObject({ created: true, reused: false, baseCommit, head: baseCommit, branch });
    expect(sh(wtPath('m1t1'), 'symbolic-ref', '--short', 'HEAD')).toBe(branch);

    const again = await git.prepareWorktree(input);
    expect(again).toMatchObject({ created: false, reused: true, head: baseCommit });
  });

  it('attaches a worktree to an existing branch and keeps its commits', async () => {
    const tip = branchWithFile(branch, 'work.txt', 'earlier work\n');
    const out = await git.prepareWorktree({ repo, branch, worktree: wtPath('m1t1'), base: 'main' });
    expect(out).toMatchObject({ created: true, head: tip });
  });

  it('prunes a stale registration whose folder was deleted', async () => {
    const input = { repo, branch, worktree: wtPath('m1t1'), base: 'main' };
    await git.prepareWorktree(input);
    rmSync(wtPath('m1t1'), { recursive: true, force: true });
    const out = await git.prepareWorktree(input);
    expect(out.created).toBe(true);
    expect(out.notes.join('\n')).toMatch(/pruned stale worktree/);
  });

  it('copies ignored files and runs setup only when created', async () => {
    writeFileSync(path.join(repo, '.env'), 'SECRET=1\n');
    const input = {
      repo,
      branch,
      worktree: wtPath('m1t1'),
      base: 'main',
      copyFiles: ['.env', 'missing.txt'],
      setup: [['node', '-e', "require('fs').writeFileSync('setup.out', process.env.SAGA_PORT_BASE)"]],
      env: { SAGA_PORT_BASE: '4100' },
    };
    const env = new MockActivityEnvironment();
    const out = (await env.run(git.prepareWorktree, input)) as Awaited<
      ReturnType<typeof git.prepareWorktree>
    >;
    expect(out).toMatchObject({ copiedFiles: ['.env'], skippedFiles: ['missing.txt'], setupRan: true });
    expect(await fs.readFile(path.join(wtPath('m1t1'), '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(await fs.readFile(path.join(wtPath('m1t1'), 'setup.out'), 'utf8')).toBe('4100');
    expect(existsSync(out.setupLogs[0])).toBe(true);

    rmSync(path.join(wtPath('m1t1'), 'setup.out'));
    const reused = await env.run(git.prepareWorktree, input);
    expect(reused).toMatchObject({ reused: true, setupRan: false, copiedFiles: [] });
    expect(existsSync(path.join(wtPath('m1t1'), 'setup.out'))).toBe(false);
  });

  it('rejects copy paths that escape the repository', async () => {
    const input = { repo, branch, worktree: wtPath('m1t1'), base: 'main', copyFiles: ['../outside'] };
    await expect(git.prepareWorktree(input)).rejects.toMatchObject({
      type: 'InvalidInput',
      nonRetryable: true,
    });
  });

  it('raises setup failures with their output, and a retry finishes setup', async () => {
    const input = {
      repo,
      branch,
      worktree: wtPath('m1t1'),
      base: 'main',
      setup: [['node', '-e', 'console.error("boom from setup"); process.exit(3)']],
    };
    await expect(git.prepareWorktree(input)).rejects.toMatchObject({
      type: 'SetupFailed',
      message: expect.stringMatching(/exited 3[\s\S]*boom from setup/),
    });
    const retry = await git.prepareWorktree({ ...input, setup: [['node', '-e', '']] });
    expect(retry).toMatchObject({ created: false, setupRan: true });
  });

  it('names what is wrong with bad input', async () => {
    await expect(
      git.prepareWorktree({ repo, branch, worktree: 'relative/path', base: 'main' }),
    ).rejects.toMatchObject({
      type: 'InvalidInput',
      message: expect.stringContaining('worktree must be an absolute path'),
    });
  });
});

describe('prepareTaskWorktree (a task with dependencies)', () => {
  const taskGit = createTaskGitActivities({ git });
  const prepareTask = (key: string, branch: string, mergeBranches: string[]) =>
    taskGit.prepareTaskWorktree({
      repo,
      branch,
      worktree: wtPath(key),
      base: 'main',
      mergeBranches,
      mergeMessage: 'bring in',
    });

  it('starts a new task at its dependency when that contains the base: same files, no merge commit', async () => {
    const dep = taskBranch('demo', 1, 1, 'first');
    const depTip = branchWithFile(dep, 'first.txt', 'first\n');
    const out = await prepareTask('m1t2', taskBranch('demo', 1, 2, 'second'), [dep]);
    expect(out).toMatchObject({ created: true, baseCommit: depTip, startCommit: depTip, conflicts: [] });
    expect(sh(out.worktree, 'rev-parse', 'HEAD')).toBe(depTip);
    expect(existsSync(path.join(out.worktree, 'first.txt'))).toBe(true);
  });

  it('merges a second dependency, and merges (not restarts) into a task branch that exists already', async () => {
    const a = taskBranch('demo', 1, 1, 'a');
    const b = taskBranch('demo', 1, 2, 'b');
    branchWithFile(a, 'a.txt', 'a\n');
    const bTip = branchWithFile(b, 'b.txt', 'b\n');
    const mine = taskBranch('demo', 1, 3, 'mine');
    const myWork = branchWithFile(mine, 'mine.txt', 'earlier delegation\n');
    const out = await prepareTask('m1t3', mine, [a, b]);
    expect(out.created).toBe(true);
    expect(out.startCommit).toBe(sh(out.worktree, 'rev-parse', 'HEAD'));
    for (const file of ['a.txt', 'b.txt', 'mine.txt'])
      expect(existsSync(path.join(out.worktree, file))).toBe(true);
    // The existing branch kept its own commit; both dependencies came in as merges.
    expect(sh(out.worktree, 'merge-base', '--is-ancestor', myWork, 'HEAD')).toBe('');
    expect(sh(out.worktree, 'rev-list', '--merges', '--count', `${myWork}..HEAD`)).toBe('2');
    expect(sh(out.worktree, 'merge-base', '--is-ancestor', bTip, 'HEAD')).toBe('');
  });
});

describe('commitHandoff and removeWorktree', () => {
  const branch = taskBranch('demo', 1, 2, 'handoff');

  it('commits changes (with a fallback identity), and is a no-op when nothing changed', async () => {
    const worktree = wtPath('m1t2');
    await git.prepareWorktree({ repo, branch, worktree, base: 'main' });
    const nothing = await git.commitHandoff({ worktree, message: 'handoff' });
    expect(nothing).toEqual({
      commit: baseCommit,
      committed: false,
      changedFiles: [],
      changedFileCount: 0,
      notes: [],
    });

    writeFileSync(path.join(worktree, 'README.md'), '# changed\n');
    writeFileSync(path.join(worktree, 'feature.ts'), 'export {};\n');
    const done = await git.commitHandoff({ worktree, message: 'saga(demo): task 1.2 handoff' });
    expect(done.committed).toBe(true);
    expect(done.commit).not.toBe(baseCommit);
    expect(done.changedFiles.sort()).toEqual(['README.md', 'feature.ts']);
    expect(sh(worktree, 'log', '-1', '--format=%ae %s')).toBe('saga@localhost saga(demo): task 1.2 handoff');

    // A retried handoff commits nothing new but still reports the task's files against the base.
    const retried = await git.commitHandoff({ worktree, message: 'again', baseCommit });
    expect(retried).toMatchObject({ commit: done.commit, committed: false });
    expect(retried.changedFiles.sort()).toEqual(['README.md', 'feature.ts']);
  });

  it('refuses to remove a worktree holding uncommitted work; the handoff survives removal', async () => {
    const worktree = wtPath('m1t2');
    await git.prepareWorktree({ repo, branch, worktree, base: 'main' });
    writeFileSync(path.join(worktree, 'partial.txt'), 'useful partial work\n');
    await expect(git.removeWorktree({ repo, worktree })).rejects.toMatchObject({
      type: 'UncommittedWork',
      nonRetryable: true,
      message: expect.stringContaining('partial.txt'),
    });
    expect(existsSync(path.join(worktree, 'partial.txt'))).toBe(true);

    const { commit } = await git.commitHandoff({ worktree, message: 'partial handoff' });
    expect(await git.removeWorktree({ repo, worktree })).toMatchObject({ removed: true });
    expect(existsSync(worktree)).toBe(false);
    expect(sh(repo, 'rev-parse', branch)).toBe(commit);
    expect(await git.removeWorktree({ repo, worktree })).toMatchObject({ removed: false });
  });

  it('recovers from a stale index.lock and says so; a fresh lock is left alone', async () => {
    const worktree = wtPath('m1t2');
    await git.prepareWorktree({ repo, branch, worktree, base: 'main' });
    const lock = path.resolve(worktree, sh(worktree, 'rev-parse', '--git-path', 'index.lock'));
    writeFileSync(path.join(worktree, 'a.txt'), 'a\n');

    writeFileSync(lock, '');
    await expect(git.commitHandoff({ worktree, message: 'blocked' })).rejects.toThrow(/index\.lock/);
    expect(existsSync(lock)).toBe(true);

    const minuteAgo = new Date(Date.now() - 60_000);
    await fs.utimes(lock, minuteAgo, minuteAgo);
    const out = await git.commitHandoff({ worktree, message: 'after crash' });
    expect(out.committed).toBe(true);
    expect(out.notes.join('\n')).toMatch(/removed stale lock .*index\.lock/);
    expect(existsSync(lock)).toBe(false);
  });
});

describe('milestone integration', () => {
  const integration = integrationBranch('demo');
  let worktree: string;

  beforeEach(async () => {
    worktree = wtPath('integration');
    const out = await git.ensureIntegrationWorktree({ repo, branch: integration, worktree, base: 'main' });
    expect(out).toMatchObject({ head: baseCommit, created: true });
  });

  it('merges two branches, and a repeated merge is already-merged with no new commit', async () => {
    const a = taskBranch('demo', 1, 1, 'a');
    const b = taskBranch('demo', 1, 2, 'b');
    const aCommit = branchWithFile(a, 'a.txt', 'a\n');
    branchWithFile(b, 'b.txt', 'b\n');
    const first = await git.mergeBranch({ worktree, branch: a, message: `Merge ${a}` });
    expect(first).toMatchObject({ status: 'merged', conflictedFiles: [] });
    expect(sh(worktree, 'rev-parse', `${first.head}^2`)).toBe(aCommit);
    const repeat = await git.mergeBranch({ worktree, branch: a, message: `Merge ${a}` });
    expect(repeat).toMatchObject({ status: 'already-merged', head: first.head });
    const second = await git.mergeBranch({ worktree, branch: b, message: `Merge ${b}` });
    expect(second.status).toBe('merged');
    expect(existsSync(path.join(worktree, 'a.txt')) && existsSync(path.join(worktree, 'b.txt'))).toBe(true);
    expect(await git.isAncestor({ repo, commit: aCommit, of: integration })).toEqual({ ancestor: true });
    const reused = await git.ensureIntegrationWorktree({ repo, branch: integration, worktree, base: 'main' });
    expect(reused).toMatchObject({ created: false, head: second.head });
  });

  it('leaves a conflict for a resolver, refuses to complete while markers remain, then resets', async () => {
    const c = taskBranch('demo', 1, 3, 'c');
    const d = taskBranch('demo', 1, 4, 'd');
    branchWithFile(c, 'shared.txt', 'line 1 from c\nline 2\n');
    const dCommit = branchWithFile(d, 'shared.txt', 'line 1 from d\nline 2\n');
    const preIntegration = (await git.headCommit({ worktree })).commit;
    await git.mergeBranch({ worktree, branch: c, message: 'merge c' });

    const conflict = await git.mergeBranch({ worktree, branch: d, message: 'merge d' });
    expect(conflict).toMatchObject({ status: 'conflict', conflictedFiles: ['shared.txt'] });
    const retried = await git.mergeBranch({ worktree, branch: d, message: 'merge d' });
    expect(retried).toMatchObject({ status: 'conflict', conflictedFiles: ['shared.txt'] });

    const refused = await git.completeMerge({ worktree, message: 'merge d' });
    expect(refused).toMatchObject({ ok: false, remainingMarkers: ['shared.txt'], head: conflict.head });

    writeFileSync(path.join(worktree, 'shared.txt'), 'line 1 from c and d\nline 2\n');
    const resolved = await git.completeMerge({ worktree, message: 'merge d (resolved)' });
    expect(resolved).toMatchObject({ ok: true, remainingMarkers: [] });
    expect(sh(worktree, 'rev-parse', `${resolved.head}^2`)).toBe(dCommit);

    const reset = await git.resetHard({ worktree, commit: preIntegration });
    expect(reset).toMatchObject({ head: preIntegration, previousHead: resolved.head });
    expect(await fs.readFile(path.join(worktree, 'shared.txt'), 'utf8')).toBe('line 1\nline 2\n');
    // Reverting integration keeps the task branches and their commits.
    expect(sh(repo, 'rev-parse', d)).toBe(dCommit);
    expect(await git.isAncestor({ repo, commit: dCommit, of: integration })).toEqual({ ancestor: false });
  });

  it('aborts a conflicted merge', async () => {
    const c = taskBranch('demo', 1, 3, 'c');
    branchWithFile(c, 'shared.txt', 'from c\n');
    writeFileSync(path.join(worktree, 'shared.txt'), 'from integration\n');
    sh(worktree, 'commit', '-qam', 'diverge');
    const head = sh(worktree, 'rev-parse', 'HEAD');
    expect((await git.mergeBranch({ worktree, branch: c, message: 'merge c' })).status).toBe('conflict');
    expect(await git.abortMerge({ worktree })).toEqual({ aborted: true, head });
    expect(await git.abortMerge({ worktree })).toEqual({ aborted: false, head });
  });

  it('fast-forwards the base only when it is an ancestor of the integration', async () => {
    const a = taskBranch('demo', 1, 1, 'a');
    branchWithFile(a, 'a.txt', 'a\n');
    const merged = await git.mergeBranch({ worktree, branch: a, message: 'merge a' });
    const ff = await git.fastForwardBase({ repo, base: 'main', integrationBranch: integration });
    expect(ff.ok).toBe(true);
    expect(sh(repo, 'rev-parse', 'main')).toBe(merged.head);
    expect(existsSync(path.join(repo, 'a.txt'))).toBe(true); // the checked-out base moved with its files

    commitFile(repo, 'later.txt', 'user kept working\n');
    const refused = await git.fastForwardBase({ repo, base: 'main', integrationBranch: integration });
    expect(refused).toMatchObject({ ok: false, reason: expect.stringContaining('not an ancestor') });
  });

  it('refuses to hard-reset a branch that is not a saga branch', async () => {
    await expect(git.resetHard({ worktree: repo, commit: baseCommit })).rejects.toMatchObject({
      type: 'NotASagaBranch',
    });
  });
});

describe('saga worktree housekeeping', () => {
  it('lists the saga worktrees and cleans up only the clean ones', async () => {
    const clean = taskBranch('demo', 1, 1, 'clean');
    const dirty = taskBranch('demo', 1, 2, 'dirty');
    await git.prepareWorktree({ repo, branch: clean, worktree: wtPath('m1t1'), base: 'main' });
    await git.prepareWorktree({ repo, branch: dirty, worktree: wtPath('m1t2'), base: 'main' });
    await git.prepareWorktree({
      repo,
      branch: 'feature/other',
      worktree: path.join(root, 'other'),
      base: 'main',
    });
    writeFileSync(path.join(wtPath('m1t2'), 'wip.txt'), 'wip\n');

    const listed = await git.listSagaWorktrees({ repo, sagaName: 'demo' });
    expect(
      listed
        .map(({ branch, dirty: d }) => ({ branch, dirty: d }))
        .sort((x, y) => x.branch.localeCompare(y.branch)),
    ).toEqual([
      { branch: clean, dirty: false },
      { branch: dirty, dirty: true },
    ]);

    const cleaned = await git.cleanupSagaWorktrees({ repo, sagaName: 'demo' });
    expect(cleaned.removed).toEqual([await fs.realpath(root).then((r) => path.join(r, 'saga-demo-m1t1'))]);
    expect(cleaned.kept).toEqual([
      {
        path: expect.stringContaining('saga-demo-m1t2'),
        reason: expect.stringMatching(/uncommitted.*wip\.txt/),
      },
    ]);
    expect(existsSync(wtPath('m1t1'))).toBe(false);
    expect(existsSync(path.join(wtPath('m1t2'), 'wip.txt'))).toBe(true);
    expect(existsSync(path.join(root, 'other'))).toBe(true);
  });

  it('reconciles recorded task state with git and lists discrepancies', async () => {
    const integration = integrationBranch('demo');
    const merged = taskBranch('demo', 1, 1, 'merged');
    const deleted = taskBranch('demo', 1, 2, 'deleted');
    const moved = taskBranch('demo', 1, 3, 'moved');
    const pending = taskBranch('demo', 1, 4, 'pending');
    const mergedCommit = branchWithFile(merged, 'm.txt', 'm\n');
    const deletedCommit = branchWithFile(deleted, 'd.txt', 'd\n');
    sh(repo, 'branch', '-D', deleted);
    const movedCommit = branchWithFile(moved, 'x.txt', 'x\n');
    const iwt = wtPath('integration');
    await git.ensureIntegrationWorktree({ repo, branch: integration, worktree: iwt, base: 'main' });
    await git.mergeBranch({ worktree: iwt, branch: merged, message: 'merge' });
    await git.prepareWorktree({ repo, branch: moved, worktree: wtPath('m1t3'), base: 'main' });
    commitFile(wtPath('m1t3'), 'more.txt', 'later\n');
    writeFileSync(path.join(wtPath('m1t3'), 'wip.txt'), 'wip\n');
    await git.prepareWorktree({
      repo,
      branch: taskBranch('demo', 9, 9, 'stray'),
      worktree: wtPath('m9t9'),
      base: 'main',
    });

    const out = await git.reconcileGit({
      repo,
      sagaName: 'demo',
      integrationBranch: integration,
      tasks: [
        { key: 'm1t1', branch: merged, commit: mergedCommit, expectMerged: true },
        { key: 'm1t2', branch: deleted, commit: deletedCommit },
        { key: 'm1t3', branch: moved, commit: movedCommit, expectMerged: true },
        { key: 'm1t4', branch: pending, commit: null },
        { key: 'm1t5', branch: taskBranch('demo', 1, 5, 'ghost'), commit: 'f'.repeat(40) },
      ],
    });
    const byKey = Object.fromEntries(out.tasks.map((t) => [t.key, t]));
    expect(byKey.m1t1).toMatchObject({ branchExists: true, commitExists: true, mergedIntoIntegration: true });
    expect(byKey.m1t2).toMatchObject({
      branchExists: false,
      commitExists: true,
      mergedIntoIntegration: false,
    });
    expect(byKey.m1t3).toMatchObject({ branchExists: true, worktreeExists: true, worktreeDirty: true });
    expect(byKey.m1t4).toMatchObject({ branchExists: false, commitExists: false, worktreeExists: false });
    expect(out.discrepancies.sort()).toEqual(
      [
        `m1t2: branch '${deleted}' is missing`,
        `m1t3: branch '${moved}' has commits after the recorded handoff ${movedCommit.slice(0, 12)}`,
        `m1t3: recorded as integrated but not merged into '${integration}'`,
        `m1t3: worktree '${await fs.realpath(wtPath('m1t3'))}' has uncommitted changes`,
        `m1t5: branch '${taskBranch('demo', 1, 5, 'ghost')}' is missing`,
        `m1t5: recorded commit ${'f'.repeat(12)} does not exist in the repository`,
        `worktree '${await fs.realpath(wtPath('m9t9'))}' (branch 'saga/demo/m9t9-stray') belongs to no known task`,
      ].sort(),
    );
  });
});
