/**
 * SAGA_FORGE_WEBHOOK_SECRET in the bridge's configuration (src/chat/config.ts): it alone is enough to serve
 * (no approvers needed, as forge webhooks answer nothing), it must differ from every answer secret, and the
 * start-up summary says whether the endpoint is on, never the secret.
 */
import { describeChatConfig, loadBridgeConfig } from '../../../src/chat/config';

const FORGE = 'forge-hook-secret';

describe('forge webhook configuration', () => {
  test('the forge secret alone serves /webhooks/forge, without approvers', () => {
    const config = loadBridgeConfig({ SAGA_FORGE_WEBHOOK_SECRET: FORGE, SAGA_CHAT_PORT: '0' });
    expect(config.forgeWebhookSecret).toBe(FORGE);
    expect(config.slack).toBeNull();
    expect(config.webhook).toBeNull();
    expect(config.approvers.mayAnswer('any', 'anyone')).toBe(false);
    const summary = describeChatConfig(config);
    expect(summary).toContain('Forge webhooks: POST /webhooks/forge (signed with SAGA_FORGE_WEBHOOK_SECRET)');
    expect(summary).not.toContain(FORGE);
  });

  test('answer channels still need SAGA_APPROVERS when the forge secret is set too', () => {
    expect(() =>
      loadBridgeConfig({ SAGA_FORGE_WEBHOOK_SECRET: FORGE, SLACK_SIGNING_SECRET: 'slack-secret' }),
    ).toThrow(/SAGA_APPROVERS is required/);
  });

  test('without it the endpoint is off and the summary says why', () => {
    const config = loadBridgeConfig({ SAGA_APPROVERS: 'U1', SLACK_SIGNING_SECRET: 's' });
    expect(config.forgeWebhookSecret).toBeNull();
    expect(describeChatConfig(config)).toMatch(/Forge webhooks: .*off: SAGA_FORGE_WEBHOOK_SECRET is not set/);
  });

  test('nothing at all to serve names the forge secret among the choices', () => {
    expect(() => loadBridgeConfig({ SAGA_APPROVERS: 'U1' })).toThrow(/SAGA_FORGE_WEBHOOK_SECRET/);
  });

  test('it may not be an answer secret', () => {
    expect(() =>
      loadBridgeConfig({
        SAGA_APPROVERS: 'U1',
        SLACK_SIGNING_SECRET: FORGE,
        SAGA_FORGE_WEBHOOK_SECRET: FORGE,
      }),
    ).toThrow(/SAGA_FORGE_WEBHOOK_SECRET must differ/);
  });
});
