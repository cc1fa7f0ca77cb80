/**
 * The Slack app of `saga chat serve` over real HTTP against the real Temporal server and a local stand-in for
 * Slack's Web API: a waiting saga posts a message with one button per option (recommended one primary) and a
 * Web UI link; a correctly signed button press answers it, the saga moves on and the message is updated to show
 * who answered what; bad signatures, stale requests, non-approvers, second presses and oversized bodies are
 * refused and change nothing, and so is a signed request sent a second time; `/saga` slash commands mirror the
 * CLI with ephemeral replies, for approvers only (status included).
 */
import { loadBridgeConfig } from '../../../../src/chat/config';
import { startChatBridge, type ChatBridge } from '../../../../src/client/chat/server';
import { sign } from '../../../../src/chat/signing';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { startHttpRecorder, type HttpRecorder, type RecordedRequest } from '../../../harness/http-recorder';
import {
  createSagaTestEnv,
  sagaStatus,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { saveEnv } from '../../../harness/process-env';
import { cancelSagaQuietly, startGreetingSaga } from '../../../harness/greeting-saga';

const SIGNING_SECRET = 'slack-test-signing-secret';
const BOT_TOKEN = 'xoxb-test-token';
const CHANNEL = 'C0SAGA';
const APPROVER = 'UAPPROVER';
const CHAT_ENV = ['SLACK_BOT_TOKEN', 'SLACK_CHANNEL', 'SLACK_API_URL', 'SAGA_REMIND_AFTER_MS'] as const;
const now = () => Math.floor(Date.now() / 1000);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
/** Slack API calls arrive as JSON (the worker) or form-encoded (Bolt's Web API client). */
/** A Web API call's arguments: a JSON body, or a form whose object arguments (blocks) are JSON text, as Slack reads it. */
const callBody = (r: RecordedRequest): Json => {
  if (String(r.headers['content-type']).includes('json')) return JSON.parse(r.rawBody) as Json;
  const form: Json = Object.fromEntries(new URLSearchParams(r.rawBody));
  if (typeof form.blocks === 'string') form.blocks = JSON.parse(form.blocks);
  return form;
};
const method = (r: RecordedRequest) => r.path.replace(/^\/api\//, '');

describe('chat bridge: Slack app', () => {
  let env: SagaTestEnv;
  let slackApi: HttpRecorder;
  let bridge: ChatBridge;
  let restoreEnv: () => void = () => undefined;
  let name: string;
  let nextTs = 1;
  /** Slack gives every request its own trigger id, so no two requests carry the same signature. */
  let nextTrigger = 1;

  beforeAll(async () => {
    env = await createSagaTestEnv('chatslack');
    slackApi = await startHttpRecorder((r) =>
      method(r) === 'chat.postEphemeral'
        ? { ok: true, message_ts: `1700000000.9${nextTs++}` }
        : { ok: true, channel: CHANNEL, ts: callBody(r).ts ?? `1700000000.00${nextTs++}` },
    );
    restoreEnv = saveEnv(CHAT_ENV);
    Object.assign(process.env, {
      SAGA_HOME: env.sagaHome,
      SAGA_HOST_ID: env.hostId,
      SAGA_TASK_QUEUE: env.taskQueue,
      // The worker's notification activity reads these.
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_CHANNEL: CHANNEL,
      SLACK_API_URL: `${slackApi.url}/api/`,
    });
    delete process.env.SAGA_REMIND_AFTER_MS;
    await env.startWorkers();
    bridge = await startChatBridge({
      client: env.client,
      host: '127.0.0.1',
      config: loadBridgeConfig({
        SAGA_APPROVERS: APPROVER,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_API_URL: `${slackApi.url}/api/`,
        SAGA_CHAT_PORT: '0',
      }),
    });
    const input = await startGreetingSaga(env, 'chatslack', { uiBaseUrl: 'http://127.0.0.1:8233' });
    name = input.name;
  });

  afterAll(async () => {
    await cancelSagaQuietly(env, name);
    await bridge?.close();
    await slackApi?.close();
    await env?.close();
    restoreEnv();
  });

  const postSlack = (body: string, opts: { timestamp?: number; secret?: string; type?: string } = {}) => {
    const timestamp = String(opts.timestamp ?? now());
    return fetch(`${bridge.url}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': opts.type ?? 'application/x-www-form-urlencoded',
        'X-Slack-Request-Timestamp': timestamp,
        'X-Slack-Signature': sign('v0', opts.secret ?? SIGNING_SECRET, timestamp, body),
      },
      body,
    });
  };
  const messageFor = (id: string) =>
    slackApi.waitFor((r) => method(r) === 'chat.postMessage' && callBody(r).text.includes(`\`${id}\``));
  /** The form Slack posts when a user presses a button of `message`. */
  const press = (user: string, message: RecordedRequest, optionIndex: number) => {
    const call = callBody(message);
    const ts = (message.reply as Json).ts as string;
    const button = call.blocks[1].elements[optionIndex];
    const payload = {
      type: 'block_actions',
      team: { id: 'T0TEAM', domain: 'team' },
      user: { id: user, username: user.toLowerCase(), team_id: 'T0TEAM' },
      api_app_id: 'A0APP',
      token: 'legacy-verification-token',
      trigger_id: `1.2.${nextTrigger++}`,
      container: { type: 'message', message_ts: ts, channel_id: CHANNEL, is_ephemeral: false },
      channel: { id: CHANNEL, name: 'sagas' },
      message: { type: 'message', ts, text: call.text },
      response_url: `${slackApi.url}/response`,
      actions: [
        {
          type: 'button',
          action_id: button.action_id,
          block_id: call.blocks[1].block_id,
          text: button.text,
          value: button.value,
          action_ts: `${now()}.000100`,
        },
      ],
    };
    return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  };
  const slash = (user: string, text: string) =>
    new URLSearchParams({
      token: 'legacy-verification-token',
      team_id: 'T0TEAM',
      channel_id: CHANNEL,
      user_id: user,
      user_name: user.toLowerCase(),
      command: '/saga',
      text,
      response_url: `${slackApi.url}/response`,
      trigger_id: `1.2.${nextTrigger++}`,
      api_app_id: 'A0APP',
    }).toString();
  const ephemeralsTo = (user: string) =>
    slackApi.requests.filter((r) => method(r) === 'chat.postEphemeral' && callBody(r).user === user);
  const pendingIds = async () => (await sagaStatus(env, name)).pending.map((p) => p.id);

  test('a waiting saga posts a message with one button per option, the recommended one primary, and a UI link', async () => {
    await waitForPending(env, name, 'confirm-name');
    const message = await messageFor('confirm-name');
    expect(message.headers.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    const call = callBody(message);
    expect(call.channel).toBe(CHANNEL);
    expect(call.text).toContain(`Saga *${name}* is waiting for confirm-name \`confirm-name\``);
    const buttons = call.blocks[1].elements as Json[];
    expect(buttons.map((b) => [b.text.text, b.style ?? null])).toEqual([
      ['confirm', 'primary'],
      ['cancel', null],
      ['Open in Temporal UI', null],
    ]);
    expect(JSON.parse(buttons[0]!.value)).toEqual({ saga: name, interaction: 'confirm-name', choice: '1' });
    expect(buttons[2]!.url).toBe(
      `http://127.0.0.1:8233/namespaces/${env.client.options.namespace}/workflows/${sagaWorkflowId(name)}`,
    );
  });

  test('bad signatures, stale requests, oversized bodies and non-approvers are refused; nothing changes', async () => {
    const message = await messageFor('confirm-name');
    const confirm = press(APPROVER, message, 0);
    expect((await postSlack(confirm, { secret: 'guessed' })).status).toBe(401);
    expect((await postSlack(confirm, { timestamp: now() - 301 })).status).toBe(401);
    const unsigned = await fetch(`${bridge.url}/slack/events`, { method: 'POST', body: confirm });
    expect(unsigned.status).toBe(401);
    const huge = `${confirm}&padding=${'x'.repeat(64 * 1024)}`;
    expect((await postSlack(huge)).status).toBe(413);

    // A signed press by someone not on SAGA_APPROVERS: Slack gets its 200, the user an ephemeral refusal.
    const outsiderPress = press('UOUTSIDER', message, 0);
    const timestamp = now();
    expect((await postSlack(outsiderPress, { timestamp })).status).toBe(200);
    const [refusal] = ephemeralsTo('UOUTSIDER');
    expect(callBody(refusal!).text).toMatch(/not on the list of approvers/);
    expect(callBody(refusal!).channel).toBe(CHANNEL);
    // The same signed request again (a replay within the 300 s window): refused before Bolt sees it.
    const replay = await postSlack(outsiderPress, { timestamp });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ ok: false, error: expect.stringMatching(/replayed/) });
    expect(ephemeralsTo('UOUTSIDER')).toHaveLength(1);
    expect(await pendingIds()).toEqual(['confirm-name']);
  });

  test('a signed button press answers; the saga moves on; the message shows who answered; a second press is refused', async () => {
    const message = await messageFor('confirm-name');
    expect((await postSlack(press(APPROVER, message, 0))).status).toBe(200);
    const next = await waitForPending(env, name, 'plan-approval-1');
    expect(next.log.join('\n')).toContain(`slack:${APPROVER} answered confirm-name: confirm`);

    // The worker rewrites the original message (same channel and ts as posted).
    const update = await slackApi.waitFor((r) => method(r) === 'chat.update');
    const updated = callBody(update);
    expect(updated.channel).toBe(CHANNEL);
    expect(updated.ts).toBe((message.reply as Json).ts);
    expect(updated.text).toContain(`<@${APPROVER}> answered *confirm*`);
    expect(JSON.stringify(updated.blocks)).not.toContain('saga-answer-');

    // Pressing again (e.g. "cancel" on the stale message): refused politely, nothing changes.
    expect((await postSlack(press(APPROVER, message, 1))).status).toBe(200);
    const polite = ephemeralsTo(APPROVER).map((r) => callBody(r).text);
    expect(polite).toEqual([expect.stringMatching(/already answered, so your press changed nothing/)]);
    expect(await pendingIds()).toEqual(['plan-approval-1']);
    const approval = callBody(await messageFor('plan-approval-1'));
    expect(approval.blocks[1].elements.map((b: Json) => [b.text.text, b.style ?? null])).toEqual([
      ['approve', 'primary'],
      ['revise', null],
      ['reject', null],
      ['Open in Temporal UI', null],
    ]);
  });

  test('/saga slash commands mirror the CLI with ephemeral replies; refusals say why', async () => {
    const reply = async (user: string, text: string) => {
      const res = await postSlack(slash(user, text));
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.response_type).toBe('ephemeral');
      return body.text as string;
    };
    const refused = await reply('UOUTSIDER', `status ${name}`);
    expect(refused).toMatch(/not on the list of approvers for saga chatslack, so its status is not shown/);
    expect(refused).not.toContain('plan-approval-1');
    const status = await reply(APPROVER, `status ${name}`);
    expect(status).toContain('`plan-approval-1` (plan-approval)');
    expect(status).toContain('1) approve (recommended)');

    expect(await reply('UOUTSIDER', `approve ${name}`)).toMatch(/not on the list of approvers/);
    expect(await reply(APPROVER, `revise ${name}`)).toMatch(/needs a text/);
    expect(await reply(APPROVER, `accept ${name}`)).toMatch(
      /not waiting for acceptance; it waits for `plan-approval-1`/,
    );
    expect(await reply(APPROVER, `respond ${name} plan-approval-1 revise`)).toMatch(
      /needs a note.*Nothing changed/,
    );
    expect(await reply(APPROVER, 'status no-such-saga')).toMatch(/No saga named 'no-such-saga'/);
    expect(await pendingIds()).toEqual(['plan-approval-1']);

    expect(await reply(APPROVER, `respond ${name} plan-approval-1 reject`)).toMatch(
      /Answered `plan-approval-1` of saga chatslack: \*reject\*/,
    );
    await waitForStatus(env, name, (s) => s.phase === 'cancelled');
    expect(await reply(APPROVER, `approve ${name}`)).toMatch(/not waiting for plan-approval/);
  });

  test('Events API URL verification is answered with the challenge', async () => {
    const body = JSON.stringify({ type: 'url_verification', token: 't', challenge: 'c-123' });
    const res = await postSlack(body, { type: 'application/json' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: 'c-123' });
  });
});
