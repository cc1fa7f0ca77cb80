/**
 * The worker's git on trees an agent wrote runs nothing of the agent's: a nested repository (its own config
 * naming a clean filter) is refused before anything stages or reads it, and the drivers the user's config
 * defines (filters, textconv, merge drivers) stay off whatever `.gitattributes` the agent wrote. Real git
 * in temp folders; each driver touches a marker file when it runs, so a run cannot go unseen.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGitActivities, createTaskGitActivities } from '../../../../src/activities/git';
import { cleanupSagaWorktrees, listSagaWorktrees } from '../../../../src/activities/git-ops';
import { findNestedRepos } from '../../../../src/activities/git-ops/nested-repos';
import { forgetDriverOverrides, runGit } from '../../../../src/activities/git-ops/run';
import { taskDiff } from '../../../../src/client/board/task-files';
import type { SagaStatus } from '../../../../src/domain/contract/state';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'saga-worker-git-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeEach(() => forgetDriverOverrides());

interface Setup {
  dir: string;
  repo: string;
  worktree: string;
  markers: string;
  branch: string;
  base: string;
}

let count = 0;
/**
 * A repository whose (user's) config defines a filter `x`, a diff driver `x` and a merge driver `m`, each
 * touching a marker when run; and a task worktree on `branch`.
 */
async function setUp(files: Record<string, string> = {}): Promise<Setup> {
  const dir = path.join(root, `t${++count}`);
  const repo = path.join(dir, 'repo');
  const markers = path.join(dir, 'markers');
  mkdirSync(markers, { recursive: true });
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  for (const [file, content] of Object.entries({ 'README.md': 'hi\n', ...files })) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), content);
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'first');
  userDrivers(repo, markers);
  const worktree = path.join(dir, 'wt');
  const branch = `saga/t${count}/m1t1-x`;
  await gitActivities().prepareWorktree({ repo, branch, worktree, base: 'main', copyFiles: [] });
  return { dir, repo, worktree, markers, branch, base: git(repo, 'rev-parse', 'main') };
}

function userDrivers(repo: string, markers: string): void {
  const set = (key: string, value: string) => git(repo, 'config', key, value);
  set('filter.x.clean', `touch ${markers}/user-clean; cat`);
  set('filter.x.smudge', `touch ${markers}/user-smudge; cat`);
  set('diff.x.textconv', `touch ${markers}/user-textconv; cat`);
  set('diff.x.command', `touch ${markers}/user-extdiff; true`);
  set('merge.m.driver', `touch ${markers}/user-merge; false`);
}

/** The agent's nested repository: its own config names a clean filter and a textconv for its files. */
function plantNestedRepo(at: string, markers: string): void {
  mkdirSync(at, { recursive: true });
  git(at, 'init', '-q');
  git(at, 'config', 'filter.evil.clean', `touch ${markers}/nested-clean; cat`);
  git(at, 'config', 'diff.evil.textconv', `touch ${markers}/nested-textconv; cat`);
  writeFileSync(path.join(at, '.gitattributes'), '* filter=evil diff=evil\n');
  writeFileSync(path.join(at, 'lib.txt'), 'one\n');
  git(at, 'add', '-A');
  git(at, 'commit', '-q', '-m', 'vendored');
  rmSync(path.join(markers, 'nested-clean'), { force: true }); // the agent's own run of it, confined
  writeFileSync(path.join(at, 'lib.txt'), 'two\n'); // dirty: a status or add there runs the filter
}

const ran = (markers: string) => readdirSync(markers).sort();
const clear = (markers: string) => {
  rmSync(markers, { recursive: true, force: true });
  mkdirSync(markers);
};
const gitActivities = () => createGitActivities({ sagaHome: path.join(root, 'home') });
const taskGit = () => createTaskGitActivities({ git: gitActivities() });
const handoff = (s: Setup) =>
  taskGit().handoffTask({
    repo: s.repo,
    worktree: s.worktree,
    message: 'handoff',
    branch: s.branch,
    baseCommit: s.base,
    excludePaths: [],
  });

describe('nested repositories are refused before any git reads them', () => {
  test('handoff (add -A): an untracked nested repo ends the handoff refused, nothing staged or removed', async () => {
    const s = await setUp();
    plantNestedRepo(path.join(s.worktree, 'vendor'), s.markers);
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    const out = await handoff(s);
    expect(out).toMatchObject({ committed: false, removed: false, changedFiles: [] });
    expect(out.refused).toMatch(/nested \.git entries \(vendor\/\.git\).*Nothing was staged or committed/);
    expect(out.commit).toBe(s.base);
    expect(git(s.repo, 'rev-parse', s.branch)).toBe(s.base);
    expect(git(s.worktree, 'diff', '--cached', '--name-only')).toBe(''); // nothing staged
    expect(readFileSync(path.join(s.worktree, 'vendor', 'lib.txt'), 'utf8')).toBe('two\n'); // kept
    expect(existsSync(path.join(s.worktree, 'vendor', '.git'))).toBe(true);
    expect(readFileSync(path.join(s.worktree, 'work.txt'), 'utf8')).toBe('done\n');
    expect(ran(s.markers)).toEqual([]);
  });

  test('handoff: a gitlink the agent staged (and one it committed) is refused, naming it', async () => {
    const s = await setUp();
    plantNestedRepo(path.join(s.worktree, 'vendor'), s.markers);
    git(s.worktree, 'add', 'vendor'); // the agent's own git, in its sandbox: `add -A` now enters vendor
    const staged = await handoff(s);
    expect(staged.refused).toMatch(/gitlinks its base does not have \(vendor\)/);
    expect(ran(s.markers)).toEqual([]);

    git(s.worktree, 'commit', '-q', '-m', 'a submodule');
    rmSync(path.join(s.worktree, 'vendor'), { recursive: true, force: true }); // the gitlink alone
    const committed = await handoff(s);
    expect(committed.refused).toMatch(/^'.*' holds gitlinks its base does not have \(vendor\)/);
    expect(committed.removed).toBe(false);
    expect(ran(s.markers)).toEqual([]);
  });

  test('a gitlink the base already has is not refused, nor a .git in a git-ignored folder (git never reads it)', async () => {
    const s = await setUp({ '.gitignore': '.venv/\n' });
    plantNestedRepo(path.join(s.worktree, '.venv', 'src', 'pkg'), s.markers);
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    const found = await findNestedRepos(s.worktree, s.base);
    expect(found).toEqual({ dotGits: [], gitlinks: [] });
    const out = await handoff(s);
    expect(out).toMatchObject({ committed: true, removed: true });
    expect(out.refused).toBeUndefined();
    expect(git(s.repo, 'show', `${s.branch}:work.txt`)).toBe('done');
    expect(ran(s.markers)).toEqual([]);
  });

  test('worktree removal (status): refused with the paths named, the files kept', async () => {
    const s = await setUp();
    plantNestedRepo(path.join(s.worktree, 'lib', 'vendor'), s.markers);
    git(s.worktree, 'add', 'lib/vendor'); // a status in the worktree would now enter lib/vendor
    await expect(
      gitActivities().removeWorktree({ repo: s.repo, worktree: s.worktree }),
    ).rejects.toMatchObject({
      type: 'NestedRepository',
      nonRetryable: true,
      message: expect.stringMatching(/lib\/vendor\/\.git.*gitlinks its base does not have \(lib\/vendor\)/),
    });
    expect(readFileSync(path.join(s.worktree, 'lib', 'vendor', 'lib.txt'), 'utf8')).toBe('two\n');
    expect(ran(s.markers)).toEqual([]);
  });

  test('a refused worktree listed by saga cleanup/continue (status): the nested repository is not entered', async () => {
    const s = await setUp();
    plantNestedRepo(path.join(s.worktree, 'vendor'), s.markers);
    git(s.worktree, 'add', 'vendor');
    const listed = await listSagaWorktrees({ repo: s.repo, sagaName: `t${count}` });
    expect(listed).toEqual([expect.objectContaining({ branch: s.branch, dirty: true })]);
    expect(ran(s.markers)).toEqual([]);
  });

  test("saga cleanup keeps a worktree holding a nested repository, even one git's status calls clean", async () => {
    const s = await setUp();
    plantNestedRepo(path.join(s.worktree, 'vendor'), s.markers);
    git(s.worktree, 'add', 'vendor');
    git(s.worktree, 'commit', '-q', '-m', 'gitlink'); // vendor's own changes are not the outer status's
    const out = await cleanupSagaWorktrees({ repo: s.repo, sagaName: `t${count}` });
    expect(out.removed).toEqual([]);
    expect(out.kept).toEqual([
      { path: expect.any(String), reason: expect.stringMatching(/nested git repository/) },
    ]);
    expect(readFileSync(path.join(s.worktree, 'vendor', 'lib.txt'), 'utf8')).toBe('two\n');
    expect(ran(s.markers)).toEqual([]);
  });

  test("the resolver's completeMerge (diff HEAD, add -A): refused, nothing staged, the merge still open", async () => {
    const s = await setUp({ 'shared.txt': 'base\n' });
    writeFileSync(path.join(s.worktree, 'shared.txt'), 'task\n');
    git(s.worktree, 'commit', '-q', '-am', 'task');
    writeFileSync(path.join(s.repo, 'shared.txt'), 'main\n');
    git(s.repo, 'commit', '-q', '-am', 'main');
    const integration = path.join(s.dir, 'integration');
    git(s.repo, 'worktree', 'add', '-q', '-b', 'saga/t/integration', integration, 'main');
    const merge = await gitActivities().mergeBranch({
      worktree: integration,
      branch: s.branch,
      message: 'm',
    });
    expect(merge.status).toBe('conflict');
    // The resolver fixes the conflict and plants a repository.
    writeFileSync(path.join(integration, 'shared.txt'), 'main\ntask\n');
    plantNestedRepo(path.join(integration, 'vendor'), s.markers);
    const done = await gitActivities().completeMerge({ worktree: integration, message: 'merged' });
    expect(done).toMatchObject({ ok: false, committed: false, remainingMarkers: [] });
    expect(done.refused).toContain('vendor/.git');
    expect(git(integration, 'diff', '--cached', '--name-only', '--diff-filter=A')).toBe('');
    expect(ran(s.markers)).toEqual([]);
    // Reverting the integration takes the planted repository with it; the worktree then goes.
    await gitActivities().abortMerge({ worktree: integration });
    await gitActivities().resetHard({ worktree: integration, commit: 'main' });
    expect(existsSync(path.join(integration, 'vendor'))).toBe(false);
    await expect(
      gitActivities().removeWorktree({ repo: s.repo, worktree: integration }),
    ).resolves.toMatchObject({
      removed: true,
    });
    expect(ran(s.markers)).toEqual([]);
  });
});

describe("the user's drivers stay off on files the agent's .gitattributes names", () => {
  test('handoff (add -A, commit, status on removal): no clean filter runs; the file is committed as written', async () => {
    const s = await setUp();
    writeFileSync(path.join(s.worktree, '.gitattributes'), '* filter=x diff=x merge=m\n');
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    const out = await handoff(s);
    expect(out).toMatchObject({ committed: true, removed: true });
    expect(git(s.repo, 'show', `${s.branch}:work.txt`)).toBe('done');
    expect(ran(s.markers)).toEqual([]);
  });

  test('checkout of an agent branch (worktree add) and merges of it: no smudge filter, no merge driver', async () => {
    const s = await setUp({ 'shared.txt': 'a\nb\nc\nd\ne\n' });
    writeFileSync(path.join(s.worktree, '.gitattributes'), '* filter=x diff=x merge=m\n');
    writeFileSync(path.join(s.worktree, 'shared.txt'), 'a\nb\nc\nd\nE\n');
    git(s.worktree, '-c', 'filter.x.clean=cat', 'add', '-A'); // the agent's own git runs what it likes
    git(s.worktree, 'commit', '-q', '-m', 'attributes');
    // Another task changed the same file's first line.
    git(s.repo, 'branch', 'saga/t/m1t3-z', 'main');
    const other = path.join(s.dir, 'wt3');
    git(s.repo, 'worktree', 'add', '-q', other, 'saga/t/m1t3-z');
    writeFileSync(path.join(other, 'shared.txt'), 'A\nb\nc\nd\ne\n');
    git(other, 'commit', '-q', '-am', 'other task');
    clear(s.markers);

    // A dependent task's worktree starts from the agent's branch (checkout: smudge).
    const next = path.join(s.dir, 'wt2');
    await gitActivities().prepareWorktree({
      repo: s.repo,
      branch: 'saga/t/m1t2-y',
      worktree: next,
      base: s.branch,
      copyFiles: [],
    });
    expect(readFileSync(path.join(next, 'shared.txt'), 'utf8')).toBe('a\nb\nc\nd\nE\n');
    // Integration merges it (smudge), then the other task, whose file now goes through the merge driver
    // the agent's attributes name: git's own text merge instead, which merges these lines cleanly.
    const integration = path.join(s.dir, 'integration');
    git(s.repo, 'worktree', 'add', '-q', '-b', 'saga/t/integration', integration, 'main');
    const merge = (branch: string) =>
      gitActivities().mergeBranch({ worktree: integration, branch, message: `merge ${branch}` });
    expect((await merge(s.branch)).status).toBe('merged');
    expect((await merge('saga/t/m1t3-z')).status).toBe('merged');
    expect(readFileSync(path.join(integration, 'shared.txt'), 'utf8')).toBe('A\nb\nc\nd\nE\n');
    await gitActivities().resetHard({ worktree: integration, commit: 'main' }); // reset --hard: smudge
    expect(ran(s.markers)).toEqual([]);
  });

  test("the agent's work brought back from another branch (checkout -f, cherry-pick): no filter runs", async () => {
    const s = await setUp();
    writeFileSync(path.join(s.worktree, '.gitattributes'), '* filter=x\n');
    git(s.worktree, 'checkout', '-q', '-b', 'agent-own');
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    clear(s.markers); // the agent's own git, which ran in its sandbox
    const out = await handoff(s);
    expect(out).toMatchObject({ committed: true, removed: true });
    expect(git(s.repo, 'show', `${s.branch}:work.txt`)).toBe('done');
    expect(ran(s.markers)).toEqual([]);
  });

  test("the saga's end (merge --ff-only in the user's checkout): no smudge filter", async () => {
    const s = await setUp();
    writeFileSync(path.join(s.worktree, '.gitattributes'), '* filter=x\n');
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    git(s.worktree, '-c', 'filter.x.clean=cat', 'add', '-A');
    git(s.worktree, 'commit', '-q', '-m', 'work');
    clear(s.markers);
    await gitActivities().fastForwardBase({ repo: s.repo, base: 'main', integrationBranch: s.branch });
    expect(readFileSync(path.join(s.repo, 'work.txt'), 'utf8')).toBe('done\n');
    expect(ran(s.markers)).toEqual([]);
  });

  test("diffs: the worker's name-only diffs and the board's patch run no textconv or external diff", async () => {
    const s = await setUp();
    writeFileSync(path.join(s.worktree, '.gitattributes'), '*.txt diff=x\n');
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    git(s.worktree, 'add', '-A');
    git(s.worktree, 'commit', '-q', '-m', 'work');
    writeFileSync(path.join(s.worktree, 'work.txt'), 'changed\n');
    expect(await runGit(s.worktree, ['diff', '--name-only', 'HEAD'])).toBe('work.txt\n');
    expect(await runGit(s.worktree, ['diff', '--name-only', `${s.base}...HEAD`])).toContain('work.txt');
    // The board shows the task's diff from the user's checkout, where the agent's attributes have landed.
    git(s.repo, 'merge', '-q', '--ff-only', s.branch);
    const status = {
      name: 't',
      repo: s.repo,
      integrationBranch: s.base,
      milestones: [{ tasks: [{ milestone: 1, task: 1, branch: s.branch }] }],
    } as unknown as SagaStatus;
    expect(await taskDiff(status, '1.1')).toContain('+done');
    expect(ran(s.markers)).toEqual([]);
  });
});

test("the user's drivers are read once per folder, not once per command", async () => {
  const s = await setUp();
  // A git first on PATH that logs each command and runs the real one.
  const bin = path.join(s.dir, 'bin');
  const log = path.join(s.dir, 'git.log');
  mkdirSync(bin);
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh\necho "$PWD $*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(realGit)} "$@"\n`,
    { mode: 0o755 },
  );
  const pathBefore = process.env.PATH;
  process.env.PATH = `${bin}:${pathBefore}`;
  try {
    writeFileSync(path.join(s.worktree, 'work.txt'), 'done\n');
    expect(await handoff(s)).toMatchObject({ committed: true, removed: true });
  } finally {
    process.env.PATH = pathBefore;
  }
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  const reads = lines.filter((l) => l.includes('config -z --name-only --get-regexp'));
  expect(lines.length).toBeGreaterThan(8);
  expect(reads.length).toBeLessThanOrEqual(2); // the worktree and the repository
  expect(new Set(reads.map((l) => l.split(' ')[0])).size).toBe(reads.length);
});
