/**
 * bin/saga runs the short commands from one bundled file (dist/cli.js, built by `npm run build`) with a V8
 * code cache per command, and the worker commands from dist/src/. Both ways must behave the same.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { runSaga } from '../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { PROJECT_ROOT } from '../../../src/project-root';

const ROOT = PROJECT_ROOT;

describe('the bundled CLI', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('cli-bundle');
  });
  afterAll(async () => env.close());

  test('bundled and unbundled give the same output, exit codes and errors', async () => {
    expect(existsSync(path.join(ROOT, 'dist', 'cli.js'))).toBe(true);
    const unbundled = { ...env.cliEnv, SAGA_CLI_BUNDLE: '0' };
    const cases = [
      ['--help'],
      ['flags', 'parse', '--', '--parallel=3 Ship it'],
      ['flags', 'parse', '--', '--frobnicate Ship it'],
      ['status', 'no-such-saga', '--json'],
      ['respond', 'no-such-saga', 'confirm-name', 'confirm'],
      ['status'],
      ['list', '--json'],
    ];
    for (const args of cases) {
      // `list` shows every saga on the shared server, which other test files move on meanwhile (a saga starts
      // or stops waiting between the two calls): the pair is taken again, up to 3 times, until it is of one
      // moment. A difference of the bundle's own shows in every pair.
      let pair = await Promise.all([runSaga(args, env.cliEnv), runSaga(args, unbundled)]);
      for (let i = 1; i < 3 && JSON.stringify(pair[0]) !== JSON.stringify(pair[1]); i++) {
        pair = await Promise.all([runSaga(args, env.cliEnv), runSaga(args, unbundled)]);
      }
      const [bundled, plain] = pair;
      expect({ args, ...bundled }).toEqual({ args, ...plain });
    }
    expect((await runSaga(['status', 'no-such-saga'], env.cliEnv)).stderr).toContain(
      "No saga named 'no-such-saga'",
    );
  });

  test('a code cache is made per command on its first run and used after', async () => {
    // A cache directory of this test's own: other files' `saga list`s, run meanwhile without dist's cache,
    // would write dist's list.bin again as they exit.
    const cacheEnv = { ...env.cliEnv, SAGA_CLI_CACHE_DIR: env.tmp('cli-cache') };
    const cache = path.join(cacheEnv.SAGA_CLI_CACHE_DIR, 'list.bin');
    const first = await runSaga(['list', '--json'], cacheEnv);
    expect(first.code).toBe(0);
    expect(statSync(cache).size).toBeGreaterThan(100_000);
    const made = statSync(cache).mtimeMs;
    const again = await runSaga(['list', '--json'], cacheEnv);
    expect(again.code).toBe(0);
    // Accepted by V8, so not made again.
    expect(statSync(cache).mtimeMs).toBe(made);
  });
});
