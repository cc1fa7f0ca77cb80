/**
 * When the delivery watch looks at the saga's PRs, in seconds of real time: the real deliveryWorkflow on
 * Temporal's time-skipping test server with a stand-in forge under a stand-in saga (test/harness/
 * delivery-run.ts), through hours of workflow time. Each case asserts the workflow time of every look (the
 * backoff of ci-watch.ts, a forge event's wake-up, a push by someone else) and what the watch wrote once.
 */
import { ciPollsIn } from '../../../../src/domain/delivery/ci-watch';
import { inputsOf } from '../../../harness/fleet-stand-ins';
import { forgeInputsOf } from '../../../harness/forge-stand-ins';
import {
  fixFailedCheck,
  lookOffsets,
  not5Minutes,
  offsetsOffBy,
  pendingCi,
} from '../../../harness/delivery-scripts';
import {
  createDeliveryTestEnv,
  runDelivery,
  sagaPr,
  type DeliveryTestEnv,
} from '../../../harness/delivery-run';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('when the delivery watch looks (time-skipping test server)', () => {
  let fx: DeliveryTestEnv;
  beforeAll(async () => {
    fx = await createDeliveryTestEnv();
  }, 120_000);
  afterAll(async () => fx?.env.teardown());

  test('CI pending for an hour: looks back off to one every 5 minutes: 16 looks in the hour', async () => {
    const { forgeCalls, result } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: { ci: pendingCi },
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    const offsets = lookOffsets(forgeCalls);
    // One look at once, then the backoff of ci-watch.ts: 15 s, 30 s, 1 m, 2 m, then every 5 minutes.
    expect(offsetsOffBy(offsets.slice(0, 7), [0, 15, 45, 105, 225, 525, 825])).toEqual([]);
    expect(not5Minutes(offsets.slice(5))).toEqual([]);
    expect(offsets.every((s) => s < 3_600)).toBe(true);
    // ciPollsIn counts the looks after a wait; the watch also looks once as it starts.
    expect(offsets).toHaveLength(ciPollsIn(1) + 1);
    console.log(
      `delivery watch, CI pending for 1 h: ${offsets.length} looks at the PR (1 at once + ciPollsIn(1) = ` +
        `${ciPollsIn(1)}); forge calls per PR per hour = ${offsets.length} × the calls one look costs ` +
        `(≤ 60 needs ≤ ${Math.floor(60 / offsets.length)} calls a look)`,
    );
    expect(result.prs[0]).toMatchObject({ number: 7, ci: 'pending', ciFixes: 0 });
    expect(forgeInputsOf(forgeCalls, 'landFix')).toEqual([]);
  });

  test('a forge event makes the watch look at once, not at its next timer', async () => {
    const { forgeCalls } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: { ci: pendingCi },
      schedule: [
        { atMs: 20 * MINUTE, signal: 'forgeEvent' },
        { atMs: 28 * MINUTE, signal: 'stop' },
      ],
    });
    // The timer's looks (…, 825 s, 1125 s) then the event's at 1200 s; the backoff goes on from there.
    expect(offsetsOffBy(lookOffsets(forgeCalls), [0, 15, 45, 105, 225, 525, 825, 1125, 1200, 1500])).toEqual(
      [],
    );
  });

  test('someone pushes to the PR: the old head’s failure is not acted on and the backoff starts again', async () => {
    const { forgeCalls, taskCalls, result } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: {
        // The look that finds bob's push still reads the CI of the head the watch knew: failed, and stale.
        ci: (_pr, sha, n) => (n >= 8 && sha === 'm1-head' ? fixFailedCheck(7, sha) : pendingCi(7, sha)),
        pushedBySomeone: (_pr, n) => (n >= 8 ? 'pushed-by-bob' : undefined),
      },
      schedule: [{ atMs: 1_600_000, signal: 'stop' }],
    });
    expect(
      offsetsOffBy(lookOffsets(forgeCalls), [0, 15, 45, 105, 225, 525, 825, 1125, 1425, 1440, 1470, 1530]),
    ).toEqual([]);
    expect(inputsOf(taskCalls, 'runTaskAttempt')).toEqual([]);
    expect(result.prs[0]).toMatchObject({ headSha: 'pushed-by-bob', ci: 'pending', failing: [] });
    expect(forgeInputsOf(forgeCalls, 'lookAtPullRequests').at(-1)!.prs).toEqual([
      { number: 7, headSha: 'pushed-by-bob', etag: null, commentCount: null },
    ]);
  });

  test('the bodies given are written once, to the open PRs, even across continue-as-new', async () => {
    const merged = { ...sagaPr(6, null, 'main'), state: 'merged' as const };
    const { forgeCalls } = await runDelivery(fx, {
      prs: [merged, sagaPr(7, 1, 'main'), sagaPr(8, 2, 'saga/demo/deliver-m1')],
      forge: { ci: pendingCi },
      bodies: { '6': 'body six', '7': 'body seven', '8': 'body eight' },
      // 18 h of pending CI: over 200 looks, so the watch continues as new once.
      schedule: [{ atMs: 18 * HOUR, signal: 'stop' }],
    });
    const writes = forgeInputsOf(forgeCalls, 'updatePullRequestBody');
    expect(writes.map((w) => [w.number, w.body])).toEqual([
      [7, 'body seven'],
      [8, 'body eight'],
    ]);
    expect(forgeCalls.slice(0, 2).map((c) => c.name)).toEqual([
      'updatePullRequestBody',
      'updatePullRequestBody',
    ]);
    const offsets = lookOffsets(forgeCalls);
    expect(offsets.length).toBeGreaterThan(200);
    // The carried watch keeps its backoff and looks once per wait: after the first 10 minutes every look is
    // 5 minutes after the last.
    expect(not5Minutes(offsets.slice(5))).toEqual([]);
  }, 240_000);
});
