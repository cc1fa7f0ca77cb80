/**
 * Forge webhook signatures (src/chat/forge-signature.ts): GitHub's `X-Hub-Signature-256: sha256=<hex>` and
 * Gitea/Forgejo's bare hex, HMAC-SHA256 of the raw body; anything else is refused with the reason.
 */
import { createHmac } from 'node:crypto';
import { verifyForgeSignature } from '../../../src/chat/forge-signature';

const SECRET = 'forge-secret';
const BODY = '{"ref":"refs/heads/saga/x/deliver-m1","after":"é"}';
const hex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
const headers =
  (h: Record<string, string>) =>
  (name: string): string | undefined =>
    h[name.toLowerCase()];

describe('verifyForgeSignature', () => {
  test('GitHub: sha256=<hex> in X-Hub-Signature-256', () => {
    const h = headers({ 'x-hub-signature-256': `sha256=${hex(SECRET, BODY)}` });
    expect(verifyForgeSignature(SECRET, BODY, h)).toEqual({ ok: true });
  });

  test.each(['x-gitea-signature', 'x-forgejo-signature'])('Gitea/Forgejo: bare hex in %s', (name) => {
    expect(verifyForgeSignature(SECRET, BODY, headers({ [name]: hex(SECRET, BODY) }))).toEqual({ ok: true });
    expect(verifyForgeSignature(SECRET, BODY, headers({ [name]: hex(SECRET, BODY).toUpperCase() })).ok).toBe(
      true,
    );
  });

  test('another secret, another body or a truncated digest is refused', () => {
    expect(verifyForgeSignature(SECRET, BODY, headers({ 'x-gitea-signature': hex('other', BODY) }))).toEqual({
      ok: false,
      reason: 'X-Gitea-Signature does not match',
    });
    const signedOther = headers({ 'x-hub-signature-256': `sha256=${hex(SECRET, `${BODY} `)}` });
    expect(verifyForgeSignature(SECRET, BODY, signedOther).ok).toBe(false);
    const short = headers({ 'x-hub-signature-256': `sha256=${hex(SECRET, BODY).slice(0, 63)}` });
    expect(verifyForgeSignature(SECRET, BODY, short)).toEqual({
      ok: false,
      reason: 'X-Hub-Signature-256 is not a hex HMAC-SHA256',
    });
  });

  test('no signature header (a hook without a secret sends an empty one) is refused, saying so', () => {
    for (const h of [{}, { 'x-gitea-signature': '' }] as Record<string, string>[]) {
      const result = verifyForgeSignature(SECRET, BODY, headers(h));
      expect(result.ok).toBe(false);
      expect(!result.ok && result.reason).toMatch(/no signature .*is the hook's secret set\?/);
    }
  });

  test("GitHub's old SHA-1 header alone is not accepted", () => {
    const sha1 = createHmac('sha1', SECRET).update(BODY).digest('hex');
    expect(verifyForgeSignature(SECRET, BODY, headers({ 'x-hub-signature': `sha1=${sha1}` })).ok).toBe(false);
  });
});
