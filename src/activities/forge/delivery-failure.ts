/**
 * What Temporal does with a delivery activity's failure. A forge that is down, slow or rate-limiting is
 * tried again (the activity's retry policy backs off); a forge that refuses (401 bad token, 403 no right,
 * 404 unknown repository or pull, 422 bad request) or a push it rejects fails at once with the forge's own
 * message, since trying again changes nothing until someone fixes the token, the rights or the branch.
 */
import { ApplicationFailure } from '@temporalio/common';
import { asyncLocalStorage } from '@temporalio/activity';
import { GitError, heartbeatEveryMs } from '../git-ops/run';
import { ForgeCallError, isRetryableForgeError } from './forge-error';

/** The failure type a refusal is reported with, by HTTP status. */
function refusalType(error: ForgeCallError): string {
  if (error.call === 'token') return 'ForgeTokenMissing';
  if (error.call === 'push') return 'ForgePushRefused';
  switch (error.status) {
    case 401:
      return 'ForgeUnauthorized';
    case 403:
      return 'ForgeForbidden';
    case 404:
      return 'ForgeNotFound';
    default:
      return 'ForgeRefused';
  }
}

/**
 * A push git gave up on for a reason that stays (the forge rejected the commits or the credentials), as
 * opposed to a network fault. The phrases are git's own (remote.c, transport-helper, http.c).
 */
const LASTING_PUSH_FAILURE =
  /\[rejected\]|\[remote rejected\]|non-fast-forward|fetch first|Authentication failed|returned error: (401|403|404)|protected branch/i;

/** `error` as the activity should throw it; anything unknown is thrown as it is (Temporal retries it). */
export function deliveryFailure(activity: string, error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof ForgeCallError) {
    const message = `${activity}: ${error.message}`;
    return isRetryableForgeError(error)
      ? ApplicationFailure.retryable(message, 'ForgeUnavailable')
      : ApplicationFailure.nonRetryable(message, refusalType(error));
  }
  if (error instanceof GitError && error.args.includes('push') && LASTING_PUSH_FAILURE.test(error.stderr)) {
    return ApplicationFailure.nonRetryable(`${activity}: ${error.message}`, 'ForgePushRefused');
  }
  return error;
}

/** Runs one activity's body with its failures made into what Temporal should do with them. */
export const asDeliveryActivity = <T>(activity: string, body: () => Promise<T>): Promise<T> =>
  heartbeatWhile(activity, body, (error) => deliveryFailure(activity, error));

/**
 * Runs an activity's body, heartbeating meanwhile, and throws what `failure` makes of an error. A slow forge
 * or tracker must not look like a dead worker (the workflows give these activities the saga's heartbeat
 * timeout, so a worker that dies is noticed that soon). The tracker activities use it too.
 */
export async function heartbeatWhile<T>(
  step: string,
  body: () => Promise<T>,
  failure: (error: unknown) => unknown,
): Promise<T> {
  const context = asyncLocalStorage.getStore();
  const beat = context
    ? setInterval(() => context.heartbeat({ step }), heartbeatEveryMs(context.info.heartbeatTimeoutMs))
    : undefined;
  try {
    return await body();
  } catch (error) {
    throw failure(error);
  } finally {
    if (beat) clearInterval(beat);
  }
}
