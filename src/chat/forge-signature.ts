/**
 * The signatures forges put on their webhooks: the hex HMAC-SHA256 of the raw body with the hook's secret,
 * in `X-Hub-Signature-256: sha256=<hex>` (GitHub, and Gitea too) or bare in `X-Gitea-Signature` /
 * `X-Forgejo-Signature`. Compared in constant time. They carry no timestamp, so a captured delivery could be
 * sent again: the bridge takes each delivery once (src/client/chat/forge-webhook.ts), and a forge event only
 * wakes a saga's delivery watch to look anyway.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Verification } from './signing';

export const GITHUB_SIGNATURE_HEADER = 'X-Hub-Signature-256';
export const GITEA_SIGNATURE_HEADER = 'X-Gitea-Signature';
export const FORGEJO_SIGNATURE_HEADER = 'X-Forgejo-Signature';

/** The signature headers a request carries, by header name (lower case keys as Node gives them). */
export type SignatureHeaders = (name: string) => string | undefined;

export const forgeSignature = (secret: string, body: string): string =>
  createHmac('sha256', secret).update(body, 'utf8').digest('hex');

/** The hex digest a request claims, from the first signature header it has; undefined when it has none. */
function claimedDigest(headers: SignatureHeaders): { header: string; hex: string } | undefined {
  const github = headers(GITHUB_SIGNATURE_HEADER)?.trim();
  if (github) return { header: GITHUB_SIGNATURE_HEADER, hex: github.replace(/^sha256=/, '') };
  for (const header of [GITEA_SIGNATURE_HEADER, FORGEJO_SIGNATURE_HEADER]) {
    const hex = headers(header)?.trim();
    if (hex) return { header, hex };
  }
  return undefined;
}

export function verifyForgeSignature(secret: string, body: string, headers: SignatureHeaders): Verification {
  const claimed = claimedDigest(headers);
  if (!claimed)
    return {
      ok: false,
      reason: `no signature (${GITHUB_SIGNATURE_HEADER}, ${GITEA_SIGNATURE_HEADER} or ${FORGEJO_SIGNATURE_HEADER}): is the hook's secret set?`,
    };
  if (!/^[0-9a-f]{64}$/i.test(claimed.hex))
    return { ok: false, reason: `${claimed.header} is not a hex HMAC-SHA256` };
  const expected = Buffer.from(forgeSignature(secret, body), 'hex');
  const given = Buffer.from(claimed.hex, 'hex');
  // Both are 32 bytes here (checked above), as timingSafeEqual requires.
  if (!timingSafeEqual(expected, given)) return { ok: false, reason: `${claimed.header} does not match` };
  return { ok: true };
}
