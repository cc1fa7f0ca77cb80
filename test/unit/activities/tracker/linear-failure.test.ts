/**
 * How the Linear adapter reads a failure: the wait Linear asked for, the status that decides a retry, the
 * key scrubbed from the message; and where a phase moves an issue in its team's workflow.
 */
import {
  AuthenticationLinearError,
  InvalidInputLinearError,
  NetworkLinearError,
  RatelimitedLinearError,
} from '@linear/sdk';
import { isRetryableForgeError } from '../../../../src/activities/forge/forge-error';
import { targetState } from '../../../../src/activities/tracker/linear';
import {
  MAX_LINEAR_WAIT_MS,
  failureOf,
  linearWaitMs,
} from '../../../../src/activities/tracker/linear-failure';

const headers = (h: Record<string, string>) => new Headers(h);
/** The raw error the SDK's client builds from an answer (its declared type is narrower than what it takes). */
const raw = (status: number | undefined, h: Record<string, string> = {}, message?: string) =>
  ({ message, response: { status, headers: headers(h) } }) as never;

describe('linearWaitMs', () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  test('seconds, an HTTP date, the requests reset when none is left, and nothing', () => {
    expect(linearWaitMs(headers({ 'retry-after': '7' }), now)).toBe(7000);
    expect(linearWaitMs(headers({ 'retry-after': 'Sun, 06 Dec 2026 12:00:30 GMT' }), now)).toBe(30_000);
    expect(
      linearWaitMs(
        headers({ 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(now + 4500) }),
        now,
      ),
    ).toBe(4500);
    expect(
      linearWaitMs(
        headers({ 'x-ratelimit-requests-remaining': '3', 'x-ratelimit-requests-reset': '9' }),
        now,
      ),
    ).toBeNull();
    expect(linearWaitMs(headers({}), now)).toBeNull();
    expect(linearWaitMs(undefined, now)).toBeNull();
  });
  test('capped at ten minutes, never negative', () => {
    expect(linearWaitMs(headers({ 'retry-after': '86400' }), now)).toBe(MAX_LINEAR_WAIT_MS);
    expect(linearWaitMs(headers({ 'retry-after': 'Sun, 06 Dec 2026 11:00:00 GMT' }), now)).toBe(0);
  });
});

describe('failureOf', () => {
  const key = 'lin_api_secret_value_123';
  test('a rate limit is 429, retryable, with the wait', () => {
    const e = failureOf(
      'read issue',
      new RatelimitedLinearError(raw(400, { 'retry-after': '2' }, 'slow'), []),
      key,
    );
    expect([e.status, isRetryableForgeError(e), (e as { retryAfterMs?: number }).retryAfterMs]).toEqual([
      429,
      true,
      2000,
    ]);
  });
  test('a bad key is 401 and a bad input 422, neither retried, the key never in the message', () => {
    const auth = failureOf('who am I', new AuthenticationLinearError(raw(400, {}, `bad ${key}`), []), key);
    expect(auth.status).toBe(401);
    expect(auth.message).not.toContain(key);
    expect(isRetryableForgeError(auth)).toBe(false);
    const input = failureOf(
      'update issue',
      new InvalidInputLinearError(raw(200, {}, 'labelIds invalid'), []),
      key,
    );
    expect([input.status, isRetryableForgeError(input)]).toEqual([422, false]);
  });
  test('an outage is retryable; no answer at all has no status and is retryable', () => {
    const down = failureOf('list issues', new NetworkLinearError(raw(503), []), key);
    expect([down.status, isRetryableForgeError(down)]).toEqual([503, true]);
    const none = failureOf('list issues', new TypeError('fetch failed'), key);
    expect([none.status, isRetryableForgeError(none)]).toEqual([null, true]);
  });
});

describe('targetState', () => {
  const states = [
    { id: 'd', name: 'Done', type: 'completed', position: 4 },
    { id: 'r', name: 'In Review', type: 'started', position: 3 },
    { id: 'p', name: 'In Progress', type: 'started', position: 2 },
    { id: 't', name: 'Todo', type: 'unstarted', position: 1 },
  ];
  test('started, in review, done, and a cancelled saga leaves the state', () => {
    expect(targetState('planning', states)?.id).toBe('p');
    expect(targetState('implementation', states)?.id).toBe('p');
    expect(targetState('review', states)?.id).toBe('r');
    expect(targetState('done', states)?.id).toBe('d');
    expect(targetState('cancelled', states)).toBeNull();
  });
  test('a workflow without a review or started state is left alone for those phases', () => {
    const plain = states.filter((s) => s.type !== 'started');
    expect(targetState('review', plain)).toBeNull();
    expect(targetState('planning', plain)).toBeNull();
  });
});
