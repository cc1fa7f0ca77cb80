/**
 * Git never hangs an activity and never looks like a dead worker. A command that runs past
 * its timeout is killed with everything it started (here a child of a slow `git status`), with an error
 * naming the timeout; a slow git command heartbeats, so a heartbeat timeout shorter than the work does not
 * start a second attempt beside it; quick activities' start-to-close leaves room for git's own timeout.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { runCommand } from '../../../../src/activities/process/command-helper';
import { createGitActivities, DEFAULT_GIT_TIMEOUT_MS, gitTimeoutMs } from '../../../../src/activities/git';
import { QUICK_START_TO_CLOSE } from '../../../../src/workflows/activity-proxies';
import { isRunning as alive } from '../../../harness/processes';

const root = mkdtempSync(path.join(os.tmpdir(), 'saga-git-timeout-'));

/**
 * A repo whose `git status` is slow: the worker's git runs none of the user's drivers, hooks or fsmonitor, so
 * the slowness comes from a `git` earlier on PATH that, for `status`, starts a child that sleeps `seconds`
 * (recording its pid, as a filter git started would) and then runs the real git.
 */
const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const savedPath = process.env.PATH;

function repoWithSlowStatus(name: string, seconds: number): { repo: string; pidFile: string } {
  const repo = path.join(root, name);
  const pidFile = path.join(root, `${name}.pid`);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  writeFileSync(path.join(repo, 'data.txt'), 'data\n');
  const commit = ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init'];
  execFileSync('git', ['add', '-A'], { cwd: repo });
  execFileSync('git', commit, { cwd: repo });
  const bin = path.join(root, `${name}-bin`);
  mkdirSync(bin);
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh\nfor a in "$@"; do if [ "$a" = status ]; then sleep ${seconds} & echo $! > '${pidFile}'; wait $!; fi; done\n` +
      `exec '${realGit}' "$@"\n`,
  );
  chmodSync(path.join(bin, 'git'), 0o755);
  process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
  return { repo, pidFile };
}

const git = createGitActivities({ sagaHome: path.join(root, 'home') });

afterEach(() => {
  delete process.env.SAGA_GIT_TIMEOUT_MS;
  process.env.PATH = savedPath;
});

describe('git process timeout', () => {
  test('a hanging git command is killed at the timeout, its children included, with a clear error', async () => {
    const { repo, pidFile } = repoWithSlowStatus('hang', 60);
    process.env.SAGA_GIT_TIMEOUT_MS = '1500';
    const started = Date.now();
    const error = await git.checkRepo({ repo }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/git status .* timed out after 1500 ms and was killed/);
    expect(error?.message).toContain('SAGA_GIT_TIMEOUT_MS');
    expect(Date.now() - started).toBeLessThan(8_000);
    // The child the slow git started is gone too (its process group was killed).
    expect(existsSync(pidFile)).toBe(true);
    const hookPid = Number(readFileSync(pidFile, 'utf8').trim());
    for (let i = 0; i < 20 && alive(hookPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(hookPid)).toBe(false);
  }, 15_000);

  test('the helper kills the whole process tree at the timeout', async () => {
    const pidFile = path.join(root, 'tree.pid');
    const out = await runCommand('/bin/sh', ['-c', `sleep 60 & echo $! > '${pidFile}'; wait`], {
      cwd: root,
      env: process.env,
      maxBuffer: 1 << 20,
      timeoutMs: 500,
    });
    expect(out).toMatchObject({ code: null, timedOut: true });
    expect(out.failure).toMatch(/timed out after 500 ms/);
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim());
    for (let i = 0; i < 20 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(grandchild)).toBe(false);
  });

  test('the timeout is configurable; a bad value is refused by name; the default is 10 minutes', () => {
    expect(gitTimeoutMs({})).toBe(DEFAULT_GIT_TIMEOUT_MS);
    expect(DEFAULT_GIT_TIMEOUT_MS).toBe(10 * 60_000);
    expect(gitTimeoutMs({ SAGA_GIT_TIMEOUT_MS: '90000' })).toBe(90_000);
    expect(() => gitTimeoutMs({ SAGA_GIT_TIMEOUT_MS: 'soon' })).toThrow(
      "SAGA_GIT_TIMEOUT_MS must be a positive whole number of milliseconds, not 'soon'",
    );
  });
});

describe('slow git work and activity timeouts', () => {
  test('git heartbeats while it runs, so a heartbeat timeout shorter than the work does not fire', async () => {
    const { repo } = repoWithSlowStatus('slow', 2);
    // A heartbeat timeout of 1.5 s: without heartbeats during the 2 s `git status` the attempt would time
    // out and Temporal would start a second one beside it.
    const env = new MockActivityEnvironment({
      heartbeatTimeoutMs: 1500,
      startToCloseTimeoutMs: 60_000,
      currentAttemptScheduledTimestampMs: Date.now(),
    });
    const beats: { at: number; details: unknown }[] = [];
    env.on('heartbeat', (details: unknown) => beats.push({ at: Date.now(), details }));
    const started = Date.now();
    const result = (await env.run(git.checkRepo, { repo })) as { clean: boolean };
    expect(result.clean).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats[0]!.details).toMatchObject({ step: 'git', lastLine: expect.stringMatching(/^git status/) });
    // No gap between heartbeats (or before the first) reaches the heartbeat timeout.
    const gaps = beats.map((b, i) => b.at - (i === 0 ? started : beats[i - 1]!.at));
    expect(Math.max(...gaps)).toBeLessThan(1500);
  }, 15_000);

  test("git's timeout is capped below the activity's start-to-close deadline", async () => {
    const { repo } = repoWithSlowStatus('deadline', 60);
    // 18 s left of the attempt, less the 15 s margin: git gets about 3 s, not its 10 minutes.
    const env = new MockActivityEnvironment({
      startToCloseTimeoutMs: 18_000,
      currentAttemptScheduledTimestampMs: Date.now(),
    });
    const started = Date.now();
    await expect(env.run(git.checkRepo, { repo })).rejects.toThrow(/timed out after \d+ ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 20_000);

  test("quick activities' start-to-close leaves room for a git command's whole timeout", () => {
    const minutes = Number(/^(\d+)m$/.exec(QUICK_START_TO_CLOSE)?.[1]);
    expect(minutes * 60_000).toBeGreaterThan(DEFAULT_GIT_TIMEOUT_MS);
  });
});
