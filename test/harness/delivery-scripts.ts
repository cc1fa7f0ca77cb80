/** Scripted forge answers and look timings for the delivery-decision tests (test/integration/workflows/delivery/). */
import type { CiState } from '../../src/domain/delivery/forge-shapes';
import { check, ciOf, type ForgeCall } from './forge-stand-ins';

/** Seconds of workflow time from the first look to each look. */
export const lookOffsets = (calls: ForgeCall[]): number[] => {
  const looks = calls.filter((c) => c.name === 'lookAtPullRequests');
  return looks.map((l) => Math.round((l.atMs - looks[0]!.atMs) / 1000));
};
/**
 * The look offsets (seconds) that differ from `expected` by more than 2 s, with any difference in count: the
 * time-skipping server counts the real time its activities take, which a loaded machine makes a second.
 */
export const offsetsOffBy = (offsets: number[], expected: number[]): string[] => [
  ...(offsets.length === expected.length ? [] : [`${offsets.length} looks, not ${expected.length}`]),
  ...expected.flatMap((e, i) =>
    offsets[i] !== undefined && Math.abs(offsets[i]! - e) <= 2
      ? []
      : [`look ${i}: ${offsets[i]} s, not ${e} s`],
  ),
];
export const pendingCi = (_pr: number, sha: string) => ciOf(sha, [check('build', 'pending')]);
/** Gaps between looks off 5 minutes by more than a second (the test server's timers drift by milliseconds). */
export const not5Minutes = (offsets: number[]): number[] =>
  offsets
    .slice(1)
    .map((s, i) => s - offsets[i]!)
    .filter((gap) => Math.abs(gap - 300) > 1);

/** `lint` fails on the PRs' first heads (with a log), any fix's head is green; other heads pending. */
export function fixedCheck(pr: number, sha: string): CiState {
  if (sha.startsWith('fix')) return ciOf(sha, [check('lint', 'success')]);
  if (pr !== 7) return ciOf(sha, [check('lint', 'pending')]);
  return ciOf(sha, [
    check('lint', 'failure', {
      description: 'lint found 3 errors',
      targetUrl: 'http://ci.invalid/lint/1',
      logExcerpt: 'src/greet.ts:3 no-unused-vars',
    }),
    check('coverage', 'neutral'),
  ]);
}

/** `test` fails on every head of the PR, fixed or not. */
export const fixFailedCheck = (_pr: number, sha: string): CiState =>
  ciOf(sha, [check('test', 'failure', { description: `test failed on ${sha}` })]);
