/**
 * The error every forge call and push raises, and the scrubbing of a secret from any text that leaves
 * an adapter (a forge that echoed a token would otherwise put it in a message, a log or history).
 */

/** A forge call that failed; `status` is the HTTP status, or null when no answer came (network, timeout). */
export class ForgeCallError extends Error {
  constructor(
    readonly call: string,
    readonly status: number | null,
    message: string,
    /** How long the server asked to wait before another call (Retry-After; see retry-after.ts), or null. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ForgeCallError';
  }
}

/** `text` with every occurrence of `secret` replaced (secrets shorter than 4 characters are not searched). */
export function scrubSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('***');
}

/**
 * Whether trying the call again may help: no answer (network, timeout), a server error, or a rate limit
 * (429, or GitHub's 403 and GraphQL answers that say "rate limit"). Any other 4xx (bad token, no right,
 * unknown pull) stays as it is until someone changes something.
 */
export function isRetryableForgeError(error: unknown): boolean {
  if (!(error instanceof ForgeCallError)) return false;
  if (error.call === 'token' || error.call === 'push') return false;
  if (error.status === null || error.status >= 500 || error.status === 429) return true;
  return (error.status === 403 || error.status === 200) && /rate limit/i.test(error.message);
}
