/**
 * The git library (src/activities/git-ops) is plain functions: the CLI calls them with no activity Context
 * and no activity object built around them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkRepo,
  cleanupSagaWorktrees,
  listSagaWorktrees,
  reconcileGit,
} from '../../../../src/activities/git-ops';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

let dir: string;
let repo: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'saga-git-ops-'));
  repo = path.join(dir, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  writeFileSync(path.join(repo, 'README.md'), 'hello\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'first');
  git(repo, 'worktree', 'add', '-q', '-b', 'saga/demo/m1t1-x', path.join(dir, 'wt'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('checkRepo: the toplevel, the checked-out base and whether it is clean', async () => {
  const info = await checkRepo({ repo: path.join(repo, '.') });
  expect(info).toMatchObject({ base: 'main', clean: true, dirtyFiles: [], dirtyFileCount: 0 });
  expect(info.baseCommit).toBe(git(repo, 'rev-parse', 'main'));
});

test('checkRepo: a bad input fails with the operation named', async () => {
  await expect(checkRepo({ repo: repo, base: '--all' })).rejects.toThrow(/^checkRepo: invalid input/);
});

test("reconcileGit and listSagaWorktrees see the saga's worktrees", async () => {
  const listed = await listSagaWorktrees({ repo, sagaName: 'demo' });
  expect(listed).toEqual([
    expect.objectContaining({ branch: 'saga/demo/m1t1-x', dirty: false, exists: true }),
  ]);
  const report = await reconcileGit({
    repo,
    sagaName: 'demo',
    integrationBranch: 'saga/demo/integration',
    tasks: [],
  });
  expect(report.integrationBranchExists).toBe(false);
  expect(report.findings).toEqual([
    { key: null, text: expect.stringMatching(/branch 'saga\/demo\/m1t1-x'\) belongs to no known task/) },
  ]);
});

test('cleanupSagaWorktrees removes a clean worktree', async () => {
  const result = await cleanupSagaWorktrees({ repo, sagaName: 'demo' });
  expect(result.removed).toHaveLength(1);
  expect(result.kept).toEqual([]);
});
