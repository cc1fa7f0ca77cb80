import {
  ciFixRequest,
  ciVerdict,
  NO_CI_AFTER_MS,
  ciPollsIn,
  failureFingerprint,
  newCiFailures,
  nextCiPollMs,
} from '../../../../src/domain/delivery/ci-watch';
import type { CiState, ForgeCheck } from '../../../../src/domain/delivery/forge-shapes';
import { combinedState } from '../../../../src/domain/delivery/forge-shapes';

const check = (name: string, state: ForgeCheck['state'], description = ''): ForgeCheck => ({
  name,
  state,
  description,
  targetUrl: null,
  logExcerpt: null,
});

describe('watching a PR’s CI', () => {
  test('backs off to one look every 5 minutes, under 60 forge calls an hour while CI stays pending', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map(nextCiPollMs)).toEqual([
      15_000, 30_000, 60_000, 120_000, 300_000, 300_000, 300_000,
    ]);
    expect(ciPollsIn(1)).toBeLessThanOrEqual(60);
    expect(ciPollsIn(1)).toBe(15);
    expect(ciPollsIn(2) - ciPollsIn(1)).toBe(12);
  });

  test('neutral and skipped checks never fail; any failure fails; a running one keeps it pending', () => {
    expect(combinedState([check('a', 'success'), check('b', 'neutral'), check('c', 'skipped')])).toBe(
      'success',
    );
    expect(combinedState([check('a', 'success'), check('b', 'pending')])).toBe('pending');
    expect(combinedState([check('a', 'failure'), check('b', 'pending')])).toBe('failure');
    expect(combinedState([])).toBe('pending');
  });

  test('no check at all is waited for, then taken as a repository without CI', () => {
    const none: CiState = { sha: 'a', state: 'pending', checks: [], etag: null };
    expect(ciVerdict(none, 60_000)).toBe('wait');
    expect(ciVerdict(none, NO_CI_AFTER_MS)).toBe('no-ci');
    expect(ciVerdict({ ...none, state: 'failure', checks: [check('t', 'failure')] }, 0)).toBe('failed');
    expect(ciVerdict({ ...none, state: 'success', checks: [check('t', 'success')] }, 0)).toBe('green');
  });

  test('a failure seen again (by poll or webhook) is not new; a new commit’s failure is', () => {
    const ci: CiState = {
      sha: 'aaa111',
      state: 'failure',
      checks: [
        check('test', 'failure', 'Failed after 3m12s'),
        check('lint', 'success'),
        check('docs', 'neutral'),
      ],
      etag: null,
    };
    expect(newCiFailures(ci, []).map((c) => c.name)).toEqual(['test']);
    const seen = [failureFingerprint(ci.sha, ci.checks[0]!)];
    // The same failure reported with another duration is the same failure.
    const again = { ...ci, checks: [check('test', 'failure', 'Failed after 4m01s')] };
    expect(newCiFailures(again, seen)).toEqual([]);
    expect(newCiFailures({ ...again, sha: 'bbb222' }, seen).map((c) => c.name)).toEqual(['test']);
  });

  test('the fix request names the check and quotes its log without terminal controls, capped', () => {
    const failing: ForgeCheck = {
      name: 'unit tests',
      state: 'failure',
      description: 'Tests: 1 failed',
      targetUrl: 'https://ci.example/run/7',
      logExcerpt: 'x'.repeat(10_000) + '\u001b[31mFAIL src/a.test.ts\u001b[0m',
    };
    const text = ciFixRequest(failing, '0123456789abcdef');
    expect(text).toContain('CI check "unit tests" failed on 0123456789ab: Tests: 1 failed');
    expect(text).toContain('Its log: https://ci.example/run/7');
    expect(text).toContain('FAIL src/a.test.ts');
    expect(text).not.toContain('\u001b');
    expect(text.length).toBeLessThan(4_600);
  });
});
