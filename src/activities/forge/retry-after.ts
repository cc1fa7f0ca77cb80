/**
 * How long a forge or tracker asked to be left alone, read from its answer's headers: `Retry-After` (seconds
 * or an HTTP date, as HTTP defines it), else GitHub's `X-RateLimit-Reset` (epoch seconds) when
 * `X-RateLimit-Remaining` is 0. Temporal's retry then waits that long (capped) instead of its own backoff.
 */

/** Never wait longer than this on a tracker's word: a wrong or hostile header cannot park a saga for days. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

interface HeaderSource {
  get(name: string): string | null;
}

/** Milliseconds to wait from `now`, capped at MAX_RETRY_AFTER_MS; null when the answer names no wait. */
export function retryAfterMs(headers: HeaderSource, now: number = Date.now()): number | null {
  const cap = (ms: number): number => Math.min(Math.max(0, Math.ceil(ms)), MAX_RETRY_AFTER_MS);
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return cap(Number(retryAfter) * 1000);
    // An HTTP date names its weekday and month (`Sun, 06 Dec 2026 12:00:30 GMT`); `-5` is no date.
    const at = /[a-z]{3}/i.test(retryAfter) ? Date.parse(retryAfter) : NaN;
    if (!Number.isNaN(at)) return cap(at - now);
  }
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (headers.get('x-ratelimit-remaining')?.trim() === '0' && reset && /^\d+$/.test(reset)) {
    return cap(Number(reset) * 1000 - now);
  }
  return null;
}
