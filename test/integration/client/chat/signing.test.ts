/**
 * Request signing (Slack v0 and the generic webhook's v1), the approvers allowlist, the `/saga` slash command
 * parser and the bridge's configuration from the environment.
 */
import { parseApprovers } from '../../../../src/chat/allowlist';
import { ChatConfigError, loadBridgeConfig, loadNotifyConfig } from '../../../../src/chat/config';
import { sign, verifySignature } from '../../../../src/chat/signing';
import { parseSlashCommand } from '../../../../src/chat/slash';

// Slack's published example (https://api.slack.com/authentication/verifying-requests-from-slack).
const SLACK_EXAMPLE = {
  secret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&' +
    'channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&' +
    'response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&' +
    'trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

describe('request signing', () => {
  const verifyExample = (overrides: Partial<Parameters<typeof verifySignature>[0]>) =>
    verifySignature({
      version: 'v0',
      secret: SLACK_EXAMPLE.secret,
      timestamp: SLACK_EXAMPLE.timestamp,
      body: SLACK_EXAMPLE.body,
      signature: SLACK_EXAMPLE.signature,
      nowSeconds: Number(SLACK_EXAMPLE.timestamp) + 10,
      ...overrides,
    });

  test("Slack's published signing example signs and verifies", () => {
    expect(sign('v0', SLACK_EXAMPLE.secret, SLACK_EXAMPLE.timestamp, SLACK_EXAMPLE.body)).toBe(
      SLACK_EXAMPLE.signature,
    );
    expect(verifyExample({})).toEqual({ ok: true });
  });

  test('a changed body, secret or scheme does not verify', () => {
    expect(verifyExample({ body: `${SLACK_EXAMPLE.body}&x=1` })).toMatchObject({ ok: false });
    expect(verifyExample({ secret: 'another secret' })).toMatchObject({ ok: false });
    expect(verifyExample({ version: 'v1' })).toMatchObject({ ok: false });
    expect(verifyExample({ signature: SLACK_EXAMPLE.signature.slice(0, -1) })).toMatchObject({
      ok: false,
      reason: 'signature does not match',
    });
  });

  test('timestamps more than 300 s away are refused, either way', () => {
    const ts = Number(SLACK_EXAMPLE.timestamp);
    expect(verifyExample({ nowSeconds: ts + 300 })).toEqual({ ok: true });
    expect(verifyExample({ nowSeconds: ts + 301 })).toMatchObject({ ok: false, reason: /300 s/ });
    expect(verifyExample({ nowSeconds: ts - 301 })).toMatchObject({ ok: false, reason: /300 s/ });
  });

  test('missing or malformed headers are refused', () => {
    expect(verifyExample({ signature: undefined })).toMatchObject({ ok: false, reason: /missing/ });
    expect(verifyExample({ timestamp: undefined })).toMatchObject({ ok: false, reason: /missing/ });
    expect(verifyExample({ timestamp: '1531420618.5' })).toMatchObject({ ok: false, reason: /unix seconds/ });
  });

  test('the webhook scheme signs "v1:<timestamp>:<body>"', () => {
    const body = '{"saga":"s","interaction":"i","choice":"1","user":"u"}';
    const signature = sign('v1', 'secret', '1700000000', body);
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    const check = {
      version: 'v1' as const,
      secret: 'secret',
      timestamp: '1700000000',
      body,
      nowSeconds: 1700000000,
    };
    expect(verifySignature({ ...check, signature })).toEqual({ ok: true });
    expect(verifySignature({ ...check, signature: signature.replace('v1=', 'v0=') })).toMatchObject({
      ok: false,
    });
  });
});

describe('approvers allowlist', () => {
  test('global ids answer every saga; NAME=USER only that saga', () => {
    const approvers = parseApprovers(' U1, alice ,greeting=U2,,');
    expect(approvers.mayAnswer('any', 'U1')).toBe(true);
    expect(approvers.mayAnswer('any', 'alice')).toBe(true);
    expect(approvers.mayAnswer('greeting', 'U2')).toBe(true);
    expect(approvers.mayAnswer('other', 'U2')).toBe(false);
    expect(approvers.mayAnswer('greeting', 'u1')).toBe(false);
  });

  test('an empty list or a half entry is an error', () => {
    expect(() => parseApprovers(' , ')).toThrow(/nobody/);
    expect(() => parseApprovers('greeting=')).toThrow(/SAGA=USER/);
  });
});

describe('/saga slash command', () => {
  test('mirrors the CLI', () => {
    expect(parseSlashCommand('status greeting')).toEqual({ type: 'status', saga: 'greeting' });
    expect(parseSlashCommand(' approve  greeting ')).toEqual({
      type: 'answer',
      saga: 'greeting',
      target: { kind: 'plan-approval' },
      choice: 'approve',
    });
    expect(parseSlashCommand('accept greeting --fast-forward')).toMatchObject({
      target: { kind: 'acceptance' },
      choice: 'accept and fast-forward',
    });
    expect(parseSlashCommand('report greeting README lacks greet()\nCLI exits 1')).toMatchObject({
      target: { kind: 'acceptance' },
      choice: 'report issues',
      text: 'README lacks greet()\nCLI exits 1',
    });
    expect(parseSlashCommand('respond greeting esc-m1t1-d1 edit -- use the -- flag')).toEqual({
      type: 'answer',
      saga: 'greeting',
      target: { interaction: 'esc-m1t1-d1' },
      choice: 'edit',
      text: 'use the -- flag',
    });
    expect(parseSlashCommand('respond greeting q1-scope keep it small')).toMatchObject({
      choice: 'keep it small',
    });
  });

  test('incomplete or unknown commands get the usage with the problem', () => {
    expect(parseSlashCommand('')).toEqual({ type: 'help' });
    expect(parseSlashCommand('approve')).toMatchObject({ type: 'help', problem: /needs a saga NAME/ });
    expect(parseSlashCommand('report greeting')).toMatchObject({ type: 'help', problem: /needs a text/ });
    expect(parseSlashCommand('respond greeting confirm-name')).toMatchObject({ type: 'help' });
    expect(parseSlashCommand('launch greeting')).toMatchObject({ type: 'help', problem: /Unknown command/ });
  });
});

describe('chat configuration', () => {
  const base = {
    SAGA_APPROVERS: 'U1',
    SAGA_WEBHOOK_SECRET: 'whsec',
    SAGA_WEBHOOK_USER: 'U1',
    SAGA_CHAT_PORT: '0',
  };

  test('SAGA_APPROVERS is required to serve', () => {
    const { SAGA_APPROVERS: _omitted, ...rest } = base;
    expect(() => loadBridgeConfig(rest)).toThrow(ChatConfigError);
    expect(() => loadBridgeConfig(rest)).toThrow(/SAGA_APPROVERS is required/);
  });

  test('at least one inbound channel is required, and a bad port is named', () => {
    expect(() => loadBridgeConfig({ SAGA_APPROVERS: 'U1' })).toThrow(/Nothing to serve/);
    expect(() => loadBridgeConfig({ ...base, SAGA_CHAT_PORT: 'eighty' })).toThrow(/SAGA_CHAT_PORT/);
  });

  test('Slack is on with its signing secret; the API URL gets its trailing slash', () => {
    const config = loadBridgeConfig({
      ...base,
      SLACK_SIGNING_SECRET: 's',
      SLACK_API_URL: 'http://127.0.0.1:9/api',
    });
    expect(config.slack).toEqual({ signingSecret: 's', botToken: null, apiUrl: 'http://127.0.0.1:9/api/' });
    expect(config.webhook).toEqual({ byId: new Map(), shared: { secret: 'whsec', user: 'U1' } });
  });

  test('notifications: off without targets, signed URL needs its secret, reminders default to 1 h, at most 5', () => {
    expect(loadNotifyConfig({})).toEqual({
      slack: null,
      webhook: null,
      remindAfterMs: 3_600_000,
      maxReminders: 5,
    });
    expect(() => loadNotifyConfig({ SAGA_NOTIFY_URL: 'http://127.0.0.1:9/n' })).toThrow(/SAGA_NOTIFY_SECRET/);
    expect(() => loadNotifyConfig({ SAGA_REMIND_MAX: 'many' })).toThrow(/SAGA_REMIND_MAX/);
    expect(() => loadNotifyConfig({ SAGA_REMIND_AFTER_MS: '10' })).toThrow(/SAGA_REMIND_AFTER_MS/);
    expect(
      loadNotifyConfig({ SLACK_BOT_TOKEN: 'xoxb', SLACK_CHANNEL: 'C1', SAGA_REMIND_AFTER_MS: '5000' }),
    ).toEqual({
      slack: { botToken: 'xoxb', channel: 'C1', apiUrl: 'https://slack.com/api/' },
      webhook: null,
      remindAfterMs: 5000,
      maxReminders: 5,
    });
  });
});
