/** Waiting in tests: for a condition to hold, and for a free port. */

/**
 * Polls `probe` until it returns a value other than undefined, null or false, and resolves with it; fails
 * after `timeoutMs` naming `what` it waited for.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 60_000,
  everyMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the dev server's own finder). */
export { freePort } from '../../src/worker/dev-server';
