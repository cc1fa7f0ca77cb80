/**
 * Request signing shared by Slack (v0) and the generic webhook (v1): `<version>=<hex HMAC-SHA256 of
 * "<version>:<timestamp>:<raw body>">`. Verification compares in constant time and rejects timestamps
 * more than five minutes away, so a captured request cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureVersion = 'v0' | 'v1';

export const MAX_CLOCK_SKEW_SECONDS = 300;

/** Headers of the generic webhook and of outgoing notifications (README "Chat"). */
export const WEBHOOK_TIMESTAMP_HEADER = 'X-Saga-Request-Timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'X-Saga-Signature';
/** Slack's headers for its v0 scheme. */
export const SLACK_TIMESTAMP_HEADER = 'X-Slack-Request-Timestamp';
export const SLACK_SIGNATURE_HEADER = 'X-Slack-Signature';

export function sign(version: SignatureVersion, secret: string, timestamp: string, body: string): string {
  const hex = createHmac('sha256', secret).update(`${version}:${timestamp}:${body}`).digest('hex');
  return `${version}=${hex}`;
}

export type Verification = { ok: true } | { ok: false; reason: string };

export function verifySignature(args: {
  version: SignatureVersion;
  secret: string;
  timestamp: string | undefined;
  body: string;
  signature: string | undefined;
  nowSeconds: number;
}): Verification {
  const { timestamp, signature } = args;
  if (!timestamp || !signature) return { ok: false, reason: 'missing signature or timestamp header' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'timestamp is not unix seconds' };
  if (Math.abs(args.nowSeconds - Number(timestamp)) > MAX_CLOCK_SKEW_SECONDS) {
    return { ok: false, reason: `timestamp is more than ${MAX_CLOCK_SKEW_SECONDS} s away from now` };
  }
  const expected = Buffer.from(sign(args.version, args.secret, timestamp, args.body), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  // timingSafeEqual needs equal lengths; a length mismatch is a mismatch (the length is not secret).
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { ok: false, reason: 'signature does not match' };
  }
  return { ok: true };
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
