/**
 * What Temporal does with a tracker activity's failure. A tracker that is down, slow or rate-limiting is
 * tried again, after the wait it asked for (Retry-After, capped at 10 minutes) when it named one; one that
 * refuses (401 bad token, 403 no right, 404 unknown issue, 422 bad request) or a token that is not set fails
 * at once with the tracker's message, since trying again changes nothing until someone fixes it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { heartbeatWhile } from '../forge/delivery-failure';
import { ForgeCallError, isRetryableForgeError } from '../forge/forge-error';
import { MAX_RETRY_AFTER_MS } from '../forge/retry-after';

function refusalType(error: ForgeCallError): string {
  if (error.call === 'token') return 'TrackerTokenMissing';
  switch (error.status) {
    case 401:
      return 'TrackerUnauthorized';
    case 403:
      return 'TrackerForbidden';
    case 404:
      return 'TrackerNotFound';
    default:
      return 'TrackerRefused';
  }
}

/** `error` as the activity should throw it; anything unknown is thrown as it is (Temporal retries it). */
export function trackerFailure(activity: string, error: unknown): unknown {
  if (error instanceof ApplicationFailure || !(error instanceof ForgeCallError)) return error;
  const message = `${activity}: ${error.message}`;
  if (!isRetryableForgeError(error)) return ApplicationFailure.nonRetryable(message, refusalType(error));
  const wait = error.retryAfterMs;
  return ApplicationFailure.create({
    message,
    type: 'TrackerUnavailable',
    nonRetryable: false,
    // The tracker's own word on when to come back beats Temporal's backoff (a floor of 1 s).
    ...(wait !== null ? { nextRetryDelay: Math.max(1000, Math.min(wait, MAX_RETRY_AFTER_MS)) } : {}),
  });
}

/** Runs one activity's body, heartbeating meanwhile, with its failures made into what Temporal should do. */
export const asTrackerActivity = <T>(activity: string, body: () => Promise<T>): Promise<T> =>
  heartbeatWhile(activity, body, (error) => trackerFailure(activity, error));
