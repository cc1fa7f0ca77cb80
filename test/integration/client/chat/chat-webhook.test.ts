/**
 * The generic webhook of `saga chat serve` over real HTTP against the real Temporal server: a waiting saga is
 * announced (signed with SAGA_NOTIFY_SECRET) to SAGA_NOTIFY_URL and reminded by a durable timer; bad requests
 * get their chat bridge contract status and change nothing; a signed answer from an approver (a caller of
 * SAGA_WEBHOOK_CALLERS answering as itself) moves the saga on, is recorded with its author, and its replay is
 * refused.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadBridgeConfig } from '../../../../src/chat/config';
import { startChatBridge, type ChatBridge } from '../../../../src/client/chat/server';
import { sign, verifySignature } from '../../../../src/chat/signing';
import { runCli } from '../../../../src/client/cli';
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

const SECRET = 'webhook-test-secret';
const NOTIFY_SECRET = 'notify-test-secret';
/** Each caller's own key (SAGA_WEBHOOK_CALLERS); the caller id is the user it answers as. */
const CALLER_SECRETS: Record<string, string> = {
  alice: SECRET,
  bob: 'bob-test-secret',
  mallory: 'mallory-test-secret',
};
const CHAT_ENV = ['SAGA_NOTIFY_URL', 'SAGA_NOTIFY_SECRET', 'SAGA_REMIND_AFTER_MS', 'SAGA_APPROVERS'] as const;
const now = () => Math.floor(Date.now() / 1000);

describe('chat bridge: generic webhook', () => {
  let env: SagaTestEnv;
  let receiver: HttpRecorder;
  let bridge: ChatBridge;
  let restoreEnv: () => void = () => undefined;
  let name: string;
  let sagaDir: string;

  beforeAll(async () => {
    env = await createSagaTestEnv('chathook');
    receiver = await startHttpRecorder(() => ({ ok: true }));
    restoreEnv = saveEnv(CHAT_ENV);
    Object.assign(process.env, {
      SAGA_HOME: env.sagaHome,
      SAGA_HOST_ID: env.hostId,
      SAGA_TASK_QUEUE: env.taskQueue,
      // The worker's notification activity reads these.
      SAGA_NOTIFY_URL: `${receiver.url}/notify`,
      SAGA_NOTIFY_SECRET: NOTIFY_SECRET,
      SAGA_REMIND_AFTER_MS: '1500',
    });
    await env.startWorkers();
    bridge = await startChatBridge({
      client: env.client,
      host: '127.0.0.1',
      config: loadBridgeConfig({
        SAGA_APPROVERS: 'alice,other-saga=bob',
        SAGA_WEBHOOK_CALLERS: Object.entries(CALLER_SECRETS)
          .map(([caller, secret]) => `${caller}:${secret}`)
          .join(','),
        SAGA_CHAT_PORT: '0',
      }),
    });
    const input = await startGreetingSaga(env, 'chathook', { uiBaseUrl: 'http://127.0.0.1:8233' });
    ({ name, sagaDir } = input);
  });

  afterAll(async () => {
    await cancelSagaQuietly(env, name);
    await bridge?.close();
    await receiver?.close();
    await env?.close();
    restoreEnv();
  });

  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${bridge.url}/hooks/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  /** Signed by `caller` (alice unless given) with its own secret unless another is given. */
  const signedHeaders = (
    body: string,
    opts: { timestamp?: number; secret?: string; caller?: string } = {},
  ) => {
    const timestamp = String(opts.timestamp ?? now());
    const caller = opts.caller ?? 'alice';
    return {
      'X-Saga-Caller': caller,
      'X-Saga-Request-Timestamp': timestamp,
      'X-Saga-Signature': sign('v1', opts.secret ?? CALLER_SECRETS[caller]!, timestamp, body),
    };
  };
  const answer = (fields: Record<string, unknown>) =>
    JSON.stringify({ saga: name, interaction: 'confirm-name', choice: 'confirm', user: 'alice', ...fields });
  const notificationsFor = (id: string) =>
    receiver.requests.filter(
      (r) => (JSON.parse(r.rawBody) as { interaction: { id: string } }).interaction.id === id,
    );
  const pendingIds = async () => (await sagaStatus(env, name)).pending.map((p) => p.id);

  test('a waiting saga is announced to SAGA_NOTIFY_URL, signed with SAGA_NOTIFY_SECRET, and reminded by a durable timer', async () => {
    await waitForPending(env, name, 'confirm-name');
    const first: RecordedRequest = await receiver.waitFor((r) => r.rawBody.includes('"confirm-name"'));
    expect(first.path).toBe('/notify');
    expect(
      verifySignature({
        version: 'v1',
        secret: NOTIFY_SECRET,
        timestamp: first.headers['x-saga-request-timestamp'] as string,
        signature: first.headers['x-saga-signature'] as string,
        body: first.rawBody,
        nowSeconds: now(),
      }),
    ).toEqual({ ok: true });
    const body = JSON.parse(first.rawBody);
    expect(body).toEqual({
      saga: name,
      interaction: {
        id: 'confirm-name',
        kind: 'confirm-name',
        prompt: expect.stringContaining(`Create saga '${name}'`),
        options: ['confirm', 'cancel'],
        recommended: 0,
      },
      uiUrl: `http://127.0.0.1:8233/namespaces/${env.client.options.namespace}/workflows/${sagaWorkflowId(name)}`,
    });
    // SAGA_REMIND_AFTER_MS=1500: still waiting, so it is announced again.
    await receiver.waitFor(() => notificationsFor('confirm-name').length >= 2, 15_000);
  });

  test('bad requests get their status and change nothing', async () => {
    const good = answer({});
    const cases: [string, Promise<Response>, number][] = [
      ['no signature', post(good, {}), 401],
      ['wrong secret', post(good, signedHeaders(good, { secret: 'guessed' })), 401],
      ['stale timestamp', post(good, signedHeaders(good, { timestamp: now() - 310 })), 401],
      ['future timestamp', post(good, signedHeaders(good, { timestamp: now() + 310 })), 401],
      ['tampered body', post(answer({ choice: 'cancel' }), signedHeaders(good)), 401],
      ['not JSON', post('confirm!', signedHeaders('confirm!')), 400],
      [
        'no user',
        post(
          JSON.stringify({ saga: name, interaction: 'confirm-name', choice: 'confirm' }),
          signedHeaders(JSON.stringify({ saga: name, interaction: 'confirm-name', choice: 'confirm' })),
        ),
        400,
      ],
      ['not an option', post(answer({ choice: 'maybe' }), signedHeaders(answer({ choice: 'maybe' }))), 400],
      [
        'user not allowed',
        post(answer({ user: 'mallory' }), signedHeaders(answer({ user: 'mallory' }), { caller: 'mallory' })),
        403,
      ],
      [
        'approver of another saga',
        post(answer({ user: 'bob' }), signedHeaders(answer({ user: 'bob' }), { caller: 'bob' })),
        403,
      ],
      [
        'caller answering as another user',
        post(answer({ user: 'bob' }), signedHeaders(answer({ user: 'bob' }))),
        403,
      ],
      [
        'unknown saga',
        post(answer({ saga: 'no-such-saga' }), signedHeaders(answer({ saga: 'no-such-saga' }))),
        404,
      ],
      [
        'unknown interaction',
        post(answer({ interaction: 'q9-nope' }), signedHeaders(answer({ interaction: 'q9-nope' }))),
        404,
      ],
    ];
    const big = answer({ text: 'x'.repeat(64 * 1024) });
    cases.push(['body over 64 KiB', post(big, signedHeaders(big)), 413]);
    for (const [label, response, status] of cases) {
      const res = await response;
      expect({ label, status: res.status }).toEqual({ label, status });
      expect(await res.json()).toMatchObject({ ok: false, error: expect.any(String) });
    }
    expect(await pendingIds()).toEqual(['confirm-name']);
    expect((await sagaStatus(env, name)).log.join('\n')).not.toMatch(/answered confirm-name/);
  });

  test('a signed answer from an approver moves the saga on, recorded with its author; a replay is refused', async () => {
    const body = answer({});
    const headers = signedHeaders(body);
    const res = await post(body, headers);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    const next = await waitForPending(env, name, 'plan-approval-1');
    expect(next.log.join('\n')).toContain('webhook:alice answered confirm-name: confirm');

    // The same request again (same timestamp and signature): a replay, refused before it reaches the saga.
    const replay = await post(body, headers);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ ok: false, error: expect.stringMatching(/replayed/) });
    // A freshly signed request for the same answer: already answered, nothing changes.
    // (Another timestamp than the first request's, whatever second this runs in: another signature.)
    const firstTimestamp = Number(headers['X-Saga-Request-Timestamp']);
    const again = await post(body, signedHeaders(body, { timestamp: firstTimestamp - 1 }));
    expect(again.status).toBe(409);
    expect(await pendingIds()).toEqual(['plan-approval-1']);

    const approval = await receiver.waitFor((r) => r.rawBody.includes('"plan-approval-1"'));
    expect(JSON.parse(approval.rawBody).interaction).toMatchObject({
      options: ['approve', 'revise', 'reject'],
      recommended: 0,
    });

    // decisions.md (written once the saga directory exists) names who answered.
    await waitForStatus(
      env,
      name,
      () =>
        existsSync(path.join(sagaDir, 'decisions.md')) &&
        readFileSync(path.join(sagaDir, 'decisions.md'), 'utf8').includes(
          'webhook:alice answered confirm-name: confirm',
        ),
      15_000,
    );
  });

  test('a choice that needs a note is refused without one (400)', async () => {
    const body = JSON.stringify({
      saga: name,
      interaction: 'plan-approval-1',
      choice: 'revise',
      user: 'alice',
    });
    const res = await post(body, signedHeaders(body));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ ok: false, error: expect.stringMatching(/needs a note/) });
    expect(await pendingIds()).toEqual(['plan-approval-1']);
  });

  test('saga chat serve refuses to start without SAGA_APPROVERS (exit 1, says why)', async () => {
    delete process.env.SAGA_APPROVERS;
    const err: string[] = [];
    const code = await runCli(['chat', 'serve'], { out: () => undefined, err: (line) => err.push(line) });
    expect(code).toBe(1);
    expect(err.join('\n')).toMatch(/SAGA_APPROVERS is required/);
    expect(err.join('\n')).not.toContain(SECRET);
  });
});
