/**
 * Signatures already used, kept for as long as their timestamp is accepted (MAX_CLOCK_SKEW_SECONDS either
 * way), so a captured request cannot be sent a second time inside the window either. Only requests whose
 * signature verified are remembered: without a secret nobody can fill the cache.
 */
import { MAX_CLOCK_SKEW_SECONDS } from './signing';

export class ReplayCache {
  /** Key → the unix second after which its timestamp is refused anyway. */
  private readonly seen = new Map<string, number>();

  /** True the first time `key` is presented within its window; false for a replay. */
  firstUse(key: string, timestampSeconds: number, nowSeconds: number): boolean {
    for (const [k, expiry] of this.seen) if (expiry < nowSeconds) this.seen.delete(k);
    if (this.seen.has(key)) return false;
    this.seen.set(key, timestampSeconds + MAX_CLOCK_SKEW_SECONDS);
    return true;
  }
}

export const REPLAY_REASON = 'replayed request: this signature was already used; sign a new request';
