/**
 * A failed Linear request as the tracker activities take it: a ForgeCallError naming the call, an HTTP-like
 * status that says whether trying again may help (429 and 5xx and no answer do; 401, 403, 404, 422 do not),
 * Linear's own message with the token scrubbed out, and `retryAfterMs`, the wait Linear asked for.
 *
 * Linear answers a GraphQL error with its kind in `extensions.type` and often HTTP 200 or 400, so the kind
 * the SDK parsed (LinearError.type) decides the status rather than the HTTP code alone.
 */
import { LinearError } from '@linear/sdk';
import { ForgeCallError, scrubSecret } from '../forge/forge-error';

const MAX_MESSAGE = 400;
/** Never wait longer than this on a tracker's word: a wrong header cannot park a saga for days. */
export const MAX_LINEAR_WAIT_MS = 10 * 60_000;

/** A ForgeCallError with the wait the tracker asked for (null: none named). */
export type TrackerCallError = ForgeCallError & { retryAfterMs: number | null };

export function trackerCallError(
  call: string,
  status: number | null,
  message: string,
  retryAfterMs: number | null = null,
): TrackerCallError {
  return Object.assign(new ForgeCallError(call, status, message), { retryAfterMs });
}

interface HeaderSource {
  get(name: string): string | null;
}

/**
 * Milliseconds to wait, capped: `Retry-After` (seconds or an HTTP date), else Linear's
 * `X-RateLimit-Requests-Reset` (epoch milliseconds) when no request is left; null when neither says.
 */
export function linearWaitMs(headers: HeaderSource | undefined, now: number = Date.now()): number | null {
  if (!headers) return null;
  const cap = (ms: number) => Math.min(Math.max(0, Math.ceil(ms)), MAX_LINEAR_WAIT_MS);
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return cap(Number(retryAfter) * 1000);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return cap(at - now);
  }
  const reset = headers.get('x-ratelimit-requests-reset')?.trim();
  if (headers.get('x-ratelimit-requests-remaining')?.trim() === '0' && reset && /^\d+$/.test(reset)) {
    return cap(Number(reset) - now);
  }
  return null;
}

function statusOf(error: LinearError, http: number | null): number | null {
  if (error.type === 'Ratelimited') return 429;
  if (http !== null && http >= 500) return http;
  if (/not found|could not find/i.test(error.message)) return 404;
  switch (error.type) {
    case 'AuthenticationError':
      return 401;
    case 'Forbidden':
      return 403;
    case 'InternalError':
    case 'NetworkError':
    case 'LockTimeout':
      return 503;
    case 'Unknown':
      // No answer at all (refused, reset, timed out): the SDK saw no status.
      if (http === null) return null;
  }
  return http !== null && http >= 400 ? http : 422;
}

/** `error` from a Linear request (the SDK's, or fetch's own when no answer came) as a ForgeCallError. */
export function failureOf(call: string, error: unknown, token: string): ForgeCallError {
  if (error instanceof ForgeCallError) return error;
  const clean = (text: string) => scrubSecret(text, token).slice(0, MAX_MESSAGE);
  if (error instanceof LinearError) {
    const http = typeof error.status === 'number' ? error.status : null;
    const status = statusOf(error, http);
    const raw = error.raw as { response?: { headers?: HeaderSource } } | undefined;
    const wait =
      status === null || status === 429 || status >= 500 ? linearWaitMs(raw?.response?.headers) : null;
    const said = error.errors?.[0]?.message ?? error.message;
    return trackerCallError(call, status, clean(`Linear ${call}: ${said || `HTTP ${http}`}`), wait);
  }
  const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return trackerCallError(call, null, clean(`Linear ${call}: no answer from the API (${cause})`));
}
