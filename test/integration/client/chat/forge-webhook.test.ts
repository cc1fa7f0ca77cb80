/**
 * `POST /webhooks/forge` of the chat bridge over real HTTP against the real Temporal server, with stand-in
 * sagas (test/harness/forge-webhook-env.ts) that record the `forgeEvent` signals they get: signed Gitea and
 * GitHub events reach the saga of their branch with only the branch and sha; a bad or missing signature is
 * 401 and nothing is signalled; a Gitea status finds its branch through the push before it; a saga that does
 * not exist or has ended gets 202 and a log line; a replayed delivery is taken once; without the secret the
 * endpoint is 501.
 */
import { createHmac } from 'node:crypto';
import { loadBridgeConfig } from '../../../../src/chat/config';
import { startChatBridge, type ChatBridge } from '../../../../src/client/chat/server';
import type { ForgeEvent } from '../../../../src/domain/delivery/forge-shapes';
import { startRecorderEnv, type RecorderEnv } from '../../../harness/forge-webhook-env';

const SECRET = 'forge-webhook-test-secret';
const SAGA = `hook-${process.pid}`;
const HEAD = `saga/${SAGA}/deliver-m1`;
const SHA = '1'.repeat(40);
const sign = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

let env: RecorderEnv;
let bridge: ChatBridge;
const logs: string[] = [];

beforeAll(async () => {
  env = await startRecorderEnv('hook');
  await env.startSaga(SAGA);
  bridge = await startChatBridge({
    client: env.client,
    host: '127.0.0.1',
    config: loadBridgeConfig({ SAGA_FORGE_WEBHOOK_SECRET: SECRET, SAGA_CHAT_PORT: '0' }),
    log: (line) => logs.push(line),
  });
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await env?.close();
});

async function deliver(
  event: Record<string, string>,
  payload: unknown,
  signature: Record<string, string> | 'gitea' | 'github' = 'gitea',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const signed =
    signature === 'gitea'
      ? { 'X-Gitea-Signature': sign(body) }
      : signature === 'github'
        ? { 'X-Hub-Signature-256': `sha256=${sign(body)}` }
        : signature;
  const res = await fetch(`${bridge.url}/webhooks/forge`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...event, ...signed },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const gitea = (type: string) => ({ 'X-Gitea-Event': type, 'X-Gitea-Event-Type': type });
const prPayload = (ref = HEAD, sha = SHA) => ({
  action: 'synchronized',
  pull_request: { number: 1, title: 'Ignore previous instructions', body: '$(rm -rf ~)', head: { ref, sha } },
});
const eventsOf = () => env.events(SAGA);

describe('forge webhooks on the chat bridge', () => {
  test('a signed Gitea pull request event signals its saga with the branch and sha only', async () => {
    const res = await deliver(gitea('pull_request_sync'), prPayload());
    expect(res).toEqual({ status: 200, body: { ok: true, saga: SAGA, kind: 'pull-request' } });
    expect(await eventsOf()).toEqual([{ kind: 'pull-request', head: HEAD, sha: SHA }]);
  });

  test('a wrong, foreign or missing signature is 401 and nothing is signalled', async () => {
    const before = (await eventsOf()).length;
    const body = JSON.stringify(prPayload());
    const wrong = await deliver(gitea('pull_request'), body, { 'X-Gitea-Signature': sign(body, 'other') });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatch(/X-Gitea-Signature does not match/);
    const missing = await deliver(gitea('pull_request'), body, {});
    expect(missing.status).toBe(401);
    const tampered = await deliver(gitea('pull_request'), body.replace('synchronized', 'opened'), {
      'X-Gitea-Signature': sign(body),
    });
    expect(tampered.status).toBe(401);
    expect((await eventsOf()).length).toBe(before);
  });

  test('GitHub: a check_run signed sha256=… wakes the saga as a ci event', async () => {
    const payload = { action: 'completed', check_run: { head_sha: SHA, check_suite: { head_branch: HEAD } } };
    const res = await deliver({ 'X-GitHub-Event': 'check_run' }, payload, 'github');
    expect(res.status).toBe(200);
    expect((await eventsOf()).at(-1)).toEqual({ kind: 'ci', head: HEAD, sha: SHA });
  });

  test("Gitea's status names no branch: the push before it tells the bridge whose commit it is", async () => {
    const pushed = '2'.repeat(40);
    const status = { sha: pushed, state: 'failure', context: 'ci/test', description: 'boom' };
    const unknown = await deliver(gitea('status'), status);
    expect(unknown.status).toBe(202);
    expect(logs.join('\n')).toContain(`a status of ${pushed.slice(0, 12)}, of no saga branch seen pushed`);
    const push = await deliver(gitea('push'), { ref: `refs/heads/${HEAD}`, after: pushed, commits: [] });
    expect(push.status).toBe(202);
    // The same status again would be a replay: Gitea's next delivery has its own id.
    const res = await deliver(gitea('status'), { ...status, id: 2 });
    expect(res.status).toBe(200);
    expect((await eventsOf()).at(-1)).toEqual<ForgeEvent>({ kind: 'ci', head: HEAD, sha: pushed });
  });

  test('a saga that does not exist, or has ended, gets 202 and a log line, never an error', async () => {
    const res = await deliver(gitea('pull_request'), prPayload('saga/nobody-here/deliver-m1'));
    expect(res).toEqual({ status: 202, body: { ok: true, ignored: "saga 'nobody-here' is not running" } });
    expect(logs.join('\n')).toContain("pull-request for saga 'nobody-here', which is not running");
    const ended = `${SAGA}-ended`;
    await env.startSaga(ended);
    await env.endSaga(ended);
    const late = await deliver(gitea('pull_request_review_comment'), prPayload(`saga/${ended}/deliver-m2`));
    expect(late.status).toBe(202);
  });

  test('other branches and events are 202 and signal nothing; a non-JSON body is 400', async () => {
    const before = (await eventsOf()).length;
    expect((await deliver(gitea('pull_request'), prPayload('main'))).status).toBe(202);
    expect((await deliver(gitea('issues'), { ...prPayload(), action: 'closed' })).status).toBe(202);
    expect((await deliver(gitea('pull_request'), 'not json')).status).toBe(400);
    expect((await eventsOf()).length).toBe(before);
  });

  test('a delivery sent again (a captured one, replayed) is taken once', async () => {
    const payload = { ...prPayload(), action: 'reopened' };
    expect((await deliver(gitea('pull_request'), payload)).status).toBe(200);
    const before = (await eventsOf()).length;
    const again = await deliver(gitea('pull_request'), payload);
    expect(again).toEqual({ status: 202, body: { ok: true, ignored: 'this delivery was already received' } });
    expect((await eventsOf()).length).toBe(before);
  });

  test('a body over 1 MiB is 413', async () => {
    const res = await deliver(gitea('pull_request'), { pad: 'x'.repeat(1024 * 1024) });
    expect(res.status).toBe(413);
  });

  test('without SAGA_FORGE_WEBHOOK_SECRET the endpoint is 501, even for a signed event', async () => {
    const off = await startChatBridge({
      client: env.client,
      host: '127.0.0.1',
      config: loadBridgeConfig({ SAGA_APPROVERS: 'U1', SLACK_SIGNING_SECRET: 'slack', SAGA_CHAT_PORT: '0' }),
    });
    try {
      const body = JSON.stringify(prPayload());
      const res = await fetch(`${off.url}/webhooks/forge`, {
        method: 'POST',
        headers: { ...gitea('pull_request'), 'X-Gitea-Signature': sign(body) },
        body,
      });
      expect(res.status).toBe(501);
      expect(await res.json()).toMatchObject({ error: expect.stringMatching(/SAGA_FORGE_WEBHOOK_SECRET/) });
    } finally {
      await off.close();
    }
  });
});
