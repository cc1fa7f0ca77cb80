/** Retry-After read from a forge's or tracker's answer: seconds, an HTTP date, GitHub's reset, the cap. */
import { MAX_RETRY_AFTER_MS, retryAfterMs } from '../../../../src/activities/forge/retry-after';

const NOW = Date.parse('2026-12-06T12:00:00Z');
const headers = (h: Record<string, string>) => new Headers(h);

describe('retryAfterMs', () => {
  it('reads seconds', () => {
    expect(retryAfterMs(headers({ 'Retry-After': '7' }), NOW)).toBe(7000);
    expect(retryAfterMs(headers({ 'retry-after': ' 0 ' }), NOW)).toBe(0);
  });

  it('reads an HTTP date as the time left until then', () => {
    expect(retryAfterMs(headers({ 'Retry-After': 'Sun, 06 Dec 2026 12:00:30 GMT' }), NOW)).toBe(30_000);
  });

  it('takes a date already past as no wait', () => {
    expect(retryAfterMs(headers({ 'Retry-After': 'Sun, 06 Dec 2026 11:00:00 GMT' }), NOW)).toBe(0);
  });

  it("reads GitHub's reset only when no calls remain", () => {
    const reset = String(NOW / 1000 + 42);
    expect(retryAfterMs(headers({ 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset }), NOW)).toBe(
      42_000,
    );
    expect(
      retryAfterMs(headers({ 'X-RateLimit-Remaining': '5', 'X-RateLimit-Reset': reset }), NOW),
    ).toBeNull();
  });

  it('prefers Retry-After to the reset', () => {
    const reset = String(NOW / 1000 + 42);
    const h = headers({ 'Retry-After': '3', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset });
    expect(retryAfterMs(h, NOW)).toBe(3000);
  });

  it('caps a long wait at ten minutes', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(600_000);
    expect(retryAfterMs(headers({ 'Retry-After': '86400' }), NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('gives null for no header or one it cannot read', () => {
    expect(retryAfterMs(headers({}), NOW)).toBeNull();
    expect(retryAfterMs(headers({ 'Retry-After': 'soon' }), NOW)).toBeNull();
    expect(retryAfterMs(headers({ 'Retry-After': '-5' }), NOW)).toBeNull();
  });
});
