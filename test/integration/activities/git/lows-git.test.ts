/**
 * Two of the worker's file writes that a committed file or another local user could redirect: the pre-commit
 * hook's log goes to a private folder of its own (no guessable name in the shared temp folder), and a
 * `worktree.copy` file is never written through a symlinked folder committed in the repository. Real git
 * repos, the real activities, the hook run confined.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGitActivities, createTaskGitActivities } from '../../../../src/activities/git';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

describe('worker writes that cannot be redirected', () => {
  let dir: string;
  let repo: string;
  let worktree: string;
  const branch = 'saga/lows/m1t1-x';
  const gitActivities = () => createGitActivities({ sagaHome: path.join(dir, 'home') });

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'saga-lows-git-'));
    repo = path.join(dir, 'repo');
    worktree = path.join(dir, 'wt');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(repo, '.gitignore'), '.env\nconf/.env\n');
    writeFileSync(path.join(repo, 'README.md'), 'hi\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const commitAll = () => {
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'init');
  };
  const prepare = (copyFiles: string[]) =>
    gitActivities().prepareWorktree({ repo, branch, worktree, base: 'main', copyFiles });

  test('the pre-commit hook’s log is written in a private folder of its own, removed after', async () => {
    commitAll();
    await prepare([]);
    const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
    writeFileSync(hook, '#!/bin/sh\necho checking\nsleep 1\nexit 0\n');
    chmodSync(hook, 0o755);
    writeFileSync(path.join(worktree, 'work.txt'), 'done\n');
    // The worker's temporary folder (os.tmpdir(): jest's process.env is not the one Node reads), watched
    // while the hook runs; entries there before are not this handoff's.
    const tmp = os.tmpdir();
    const before = new Set(readdirSync(tmp));
    const seen = new Map<string, string>();
    const watch = setInterval(() => {
      for (const entry of readdirSync(tmp)) {
        if (before.has(entry) || !entry.startsWith('saga-hook')) continue;
        const stat = statSync(path.join(tmp, entry), { throwIfNoEntry: false });
        if (stat)
          seen.set(entry, `${stat.isDirectory() ? 'dir' : 'file'} ${(stat.mode & 0o777).toString(8)}`);
      }
    }, 10);
    try {
      const out = await createTaskGitActivities({ git: gitActivities() }).handoffTask({
        repo,
        worktree,
        message: 'handoff',
        branch,
        excludePaths: [],
        settings: { maxFiles: 10, maxFileBytes: 4096, skipHooks: false },
      });
      expect(out.committed).toBe(true);
    } finally {
      clearInterval(watch);
    }
    expect([...seen.values()]).toEqual(['dir 700']);
    expect([...seen.keys()][0]).toMatch(/^saga-hook-\w{6}$/);
    expect(existsSync(path.join(tmp, [...seen.keys()][0]!))).toBe(false);
  });

  test('a worktree.copy file is not written through a committed symlinked folder', async () => {
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, path.join(repo, 'conf'));
    commitAll();
    // The user's own copy of the ignored file, beside the committed symlink (resolved inside the repo).
    rmSync(path.join(repo, 'conf'));
    mkdirSync(path.join(repo, 'conf'));
    writeFileSync(path.join(repo, 'conf', '.env'), 'SECRET=1\n');
    await expect(prepare(['conf/.env'])).rejects.toMatchObject({
      type: 'CopyThroughSymlink',
      message: expect.stringContaining("worktree.copy entry 'conf/.env' would be written through 'conf'"),
    });
    expect(existsSync(path.join(outside, '.env'))).toBe(false);
  });

  test('a worktree.copy file whose target is a committed symlink is skipped, not written through', async () => {
    const outside = path.join(dir, 'outside.env');
    symlinkSync(outside, path.join(repo, '.env'));
    git(repo, 'add', '-f', '.env');
    commitAll();
    rmSync(path.join(repo, '.env'));
    writeFileSync(path.join(repo, '.env'), 'SECRET=1\n');
    git(repo, 'rm', '-q', '--cached', '.env');
    git(repo, 'commit', '-q', '-m', 'untrack');
    git(repo, 'branch', '-f', 'with-link', 'HEAD~1');
    await gitActivities().prepareWorktree({
      repo,
      branch,
      worktree,
      base: 'with-link',
      copyFiles: ['.env'],
    });
    expect(existsSync(outside)).toBe(false);
  });
});
