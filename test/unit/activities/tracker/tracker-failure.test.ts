/** What Temporal is told about a tracker call that failed: refusals at once, the rest retried when asked. */
import { ApplicationFailure } from '@temporalio/common';
import { ForgeCallError } from '../../../../src/activities/forge/forge-error';
import { trackerFailure } from '../../../../src/activities/tracker/tracker-failure';

const failure = (error: unknown) => trackerFailure('writeWorkpad', error) as ApplicationFailure;

describe('trackerFailure', () => {
  it.each([
    [401, 'TrackerUnauthorized'],
    [403, 'TrackerForbidden'],
    [404, 'TrackerNotFound'],
    [422, 'TrackerRefused'],
  ])('%i is not retried (%s) and keeps the tracker message', (status, type) => {
    const f = failure(new ForgeCallError('get issue', status, `HTTP ${status}: nope`));
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f.nonRetryable).toBe(true);
    expect(f.type).toBe(type);
    expect(f.message).toBe(`writeWorkpad: HTTP ${status}: nope`);
  });

  it('a missing token is not retried', () => {
    const f = failure(new ForgeCallError('token', null, 'set GITEA_TOKEN'));
    expect([f.nonRetryable, f.type]).toEqual([true, 'TrackerTokenMissing']);
  });

  it('429 and 5xx are retried after the wait the tracker asked for, capped at ten minutes', () => {
    const limited = failure(new ForgeCallError('get issue', 429, 'slow down', 3000));
    expect([limited.nonRetryable, limited.type, limited.nextRetryDelay]).toEqual([
      false,
      'TrackerUnavailable',
      3000,
    ]);
    expect(failure(new ForgeCallError('x', 503, 'down', 3_600_000)).nextRetryDelay).toBe(600_000);
    expect(failure(new ForgeCallError('x', 429, 'now', 0)).nextRetryDelay).toBe(1000);
  });

  it('without a named wait (or no answer at all), Temporal backs off as usual', () => {
    expect(failure(new ForgeCallError('x', 502, 'bad gateway')).nextRetryDelay).toBeUndefined();
    const refused = failure(new ForgeCallError('x', null, 'ECONNREFUSED'));
    expect([refused.nonRetryable, refused.nextRetryDelay]).toEqual([false, undefined]);
  });

  it('passes anything else through untouched', () => {
    const odd = new Error('odd');
    expect(trackerFailure('a', odd)).toBe(odd);
  });
});
