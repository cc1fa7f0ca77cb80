import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createValidationActivities,
  type RunChecksInput,
  type RunChecksResult,
} from '../../../../src/activities/validation';
import { processesRunning } from '../../../harness/processes';

const newEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });

describe('runChecks', () => {
  let dir: string;
  let sagaDir: string;
  let cwd: string;
  const { runChecks } = createValidationActivities({ killGraceMs: 1000 });

  const check = (env: MockActivityEnvironment, input: RunChecksInput) =>
    env.run(runChecks, input) as Promise<RunChecksResult>;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-validation-'));
    sagaDir = path.join(dir, 'saga');
    cwd = path.join(dir, 'repo');
    await fs.mkdir(cwd, { recursive: true });
    await fs.writeFile(path.join(cwd, 'greet.js'), 'console.log("hello");\n');
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  test('passing checks run in cwd; output is kept as evidence', async () => {
    const result = await check(newEnv(), {
      sagaDir,
      cwd,
      label: 'm1t1-a1-checks',
      timeoutMs: 10_000,
      checks: [
        { text: 'greet prints hello', check: 'node greet.js | grep -q hello && echo greeting ok' },
        { text: 'file exists', check: 'test -f greet.js' },
      ],
    });
    expect(result.passed).toBe(true);
    expect(result.results.map((r) => [r.text, r.exitCode, r.timedOut])).toEqual([
      ['greet prints hello', 0, false],
      ['file exists', 0, false],
    ]);
    const [first] = result.results;
    expect(first.outputPath).toBe(path.join(sagaDir, 'runs', 'm1t1-a1-checks', 'check-1.log'));
    expect(await fs.readFile(first.outputPath, 'utf8')).toBe(
      '$ node greet.js | grep -q hello && echo greeting ok\ngreeting ok\n',
    );
    expect(first.tail).toBe('greeting ok\n');
  });

  test('a failing check fails the run, and the other checks still run', async () => {
    const result = await check(newEnv(), {
      sagaDir,
      cwd,
      label: 'fail',
      timeoutMs: 10_000,
      checks: [
        { text: 'broken', check: 'echo "expected hi, got hello" >&2; exit 4' },
        { text: 'fine', check: 'true' },
      ],
    });
    expect(result.passed).toBe(false);
    expect(result.results.map((r) => r.exitCode)).toEqual([4, 0]);
    expect(result.results[0].tail).toBe('expected hi, got hello\n');
  });

  test('the check line is the single `sh -c` argument, with nothing added to it', async () => {
    // The whole line goes to `sh -c`, so quoting inside it is the author's; nothing is appended to it.
    const result = await check(newEnv(), {
      sagaDir,
      cwd,
      label: 'argv',
      timeoutMs: 10_000,
      checks: [{ text: 'prints $0', check: 'echo "$0:$#"' }],
    });
    expect(result.results[0].tail).toBe('/bin/sh:0\n');
  });

  test('a check that never ends is killed at the timeout, whole tree included', async () => {
    const started = Date.now();
    const result = await check(newEnv(), {
      sagaDir,
      cwd,
      label: 'hang',
      timeoutMs: 700,
      checks: [{ text: 'server never stops', check: 'sleep 60.25 & echo "grandchild=$!"; wait' }],
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.passed).toBe(false);
    expect(result.results[0]).toMatchObject({ exitCode: null, timedOut: true });
    const log = await fs.readFile(result.results[0].outputPath, 'utf8');
    expect(log).toContain('check killed after 700 ms (timeout)');
    expect(log).toMatch(/grandchild=\d+/);
    // Confined, its pid is its namespace's: found on the host by what it runs.
    expect(processesRunning('sleep 60.25')).toEqual([]);
  });

  test('heartbeats while a check runs, and cancellation kills it', async () => {
    const env = newEnv();
    const beats: unknown[] = [];
    env.on('heartbeat', (d) => {
      beats.push(d);
      if (beats.length === 2) env.cancel();
    });
    const run = check(env, {
      sagaDir,
      cwd,
      label: 'cancel',
      timeoutMs: 60_000,
      checks: [{ text: 'slow', check: 'echo started; sleep 60' }],
    });
    await expect(run).rejects.toBeInstanceOf(CancelledFailure);
    expect(beats[1]).toMatchObject({ check: 1, of: 1, lastLine: 'started' });
  });

  test('no checks pass vacuously; a bad input is refused', async () => {
    await expect(
      check(newEnv(), { sagaDir, cwd, label: 'none', timeoutMs: 1000, checks: [] }),
    ).resolves.toEqual({ passed: true, results: [] });
    await expect(
      check(newEnv(), {
        sagaDir,
        cwd,
        label: 'bad',
        timeoutMs: 1000,
        checks: [{ text: 'x', check: '' }],
      }),
    ).rejects.toThrow(/checks\.0\.check: the check command is empty/);
  });
});
