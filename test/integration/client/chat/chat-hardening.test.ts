/**
 * Hardening of the chat bridge over real HTTP against the real Temporal server: webhook
 * callers are identified by their own key and may answer only as themselves; notifications are signed with
 * SAGA_NOTIFY_SECRET, which must differ from every answer secret; a replayed request is refused; reminders
 * back off and stop after SAGA_REMIND_MAX; the HTTP server drops slow requests and caps its connections.
 */
import http from 'node:http';
import net from 'node:net';
import { loadBridgeConfig, loadNotifyConfig } from '../../../../src/chat/config';
import { startChatBridge, type ChatBridge } from '../../../../src/client/chat/server';
import { sign, verifySignature } from '../../../../src/chat/signing';
import { startHttpRecorder, type HttpRecorder } from '../../../harness/http-recorder';
import { createSagaTestEnv, sagaStatus, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';
import { saveEnv } from '../../../harness/process-env';
import { cancelSagaQuietly, startGreetingSaga } from '../../../harness/greeting-saga';

const ALICE_SECRET = 'alice-caller-secret';
const CAROL_SECRET = 'carol-caller-secret';
const SHARED_SECRET = 'shared-webhook-secret';
const NOTIFY_SECRET = 'notify-only-secret';
const CHAT_ENV = [
  'SAGA_NOTIFY_URL',
  'SAGA_NOTIFY_SECRET',
  'SAGA_WEBHOOK_SECRET',
  'SAGA_REMIND_AFTER_MS',
  'SAGA_REMIND_MAX',
] as const;
const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chat bridge hardening: webhook callers, notify secret, replays, reminders', () => {
  let env: SagaTestEnv;
  let receiver: HttpRecorder;
  let bridge: ChatBridge;
  let restoreEnv: () => void = () => undefined;
  /** When each notification arrived (the recorder keeps no times). */
  const arrivals: { at: number; body: string }[] = [];
  let name: string;

  beforeAll(async () => {
    env = await createSagaTestEnv('chathard');
    receiver = await startHttpRecorder((r) => {
      arrivals.push({ at: Date.now(), body: r.rawBody });
      return { ok: true };
    });
    restoreEnv = saveEnv(CHAT_ENV);
    Object.assign(process.env, {
      SAGA_HOME: env.sagaHome,
      SAGA_HOST_ID: env.hostId,
      SAGA_TASK_QUEUE: env.taskQueue,
      // The worker's notification activity reads these.
      SAGA_NOTIFY_URL: `${receiver.url}/notify`,
      SAGA_NOTIFY_SECRET: NOTIFY_SECRET,
      SAGA_WEBHOOK_SECRET: SHARED_SECRET,
      SAGA_REMIND_AFTER_MS: '1000',
      SAGA_REMIND_MAX: '2',
    });
    await env.startWorkers();
    bridge = await startChatBridge({
      client: env.client,
      host: '127.0.0.1',
      config: loadBridgeConfig({
        SAGA_APPROVERS: 'alice,bob',
        SAGA_WEBHOOK_CALLERS: `alice:${ALICE_SECRET}, carol:${CAROL_SECRET}`,
        SAGA_WEBHOOK_SECRET: SHARED_SECRET,
        SAGA_WEBHOOK_USER: 'bob',
        SAGA_CHAT_PORT: '0',
      }),
    });
    const input = await startGreetingSaga(env, 'chathard');
    name = input.name;
  });

  afterAll(async () => {
    await cancelSagaQuietly(env, name);
    await bridge?.close();
    await receiver?.close();
    await env?.close();
    restoreEnv();
  });

  const answer = (fields: Record<string, unknown>) =>
    JSON.stringify({ saga: name, interaction: 'confirm-name', choice: 'confirm', user: 'alice', ...fields });
  /** Signed with `secret`; `caller` goes into X-Saga-Caller when given. */
  const signed = (body: string, secret: string, caller?: string, timestamp = now()) => ({
    'X-Saga-Request-Timestamp': String(timestamp),
    'X-Saga-Signature': sign('v1', secret, String(timestamp), body),
    ...(caller ? { 'X-Saga-Caller': caller } : {}),
  });
  const post = async (body: string, headers: Record<string, string>) => {
    const res = await fetch(`${bridge.url}/hooks/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as { ok: boolean; error?: string } };
  };
  const confirmNotices = () => arrivals.filter((a) => a.body.includes('"id":"confirm-name"'));

  test('notifications are signed with SAGA_NOTIFY_SECRET, which no answer secret verifies', async () => {
    await waitForPending(env, name, 'confirm-name');
    const first = await receiver.waitFor((r) => r.rawBody.includes('"confirm-name"'));
    const check = (secret: string) =>
      verifySignature({
        version: 'v1',
        secret,
        timestamp: first.headers['x-saga-request-timestamp'] as string,
        signature: first.headers['x-saga-signature'] as string,
        body: first.rawBody,
        nowSeconds: now(),
      });
    expect(check(NOTIFY_SECRET)).toEqual({ ok: true });
    expect(check(SHARED_SECRET)).toMatchObject({ ok: false });
  });

  test('reminders back off (each wait doubles) and stop after SAGA_REMIND_MAX', async () => {
    // SAGA_REMIND_AFTER_MS=1000, SAGA_REMIND_MAX=2: the notice, a reminder ~1 s later, another ~2 s after that.
    const deadline = Date.now() + 20_000;
    while (confirmNotices().length < 3 && Date.now() < deadline) await sleep(100);
    // The next one would be due 4 s later: wait longer than that, nothing more may come.
    await sleep(6_000);
    const notices = confirmNotices();
    expect(notices.map((n) => (JSON.parse(n.body) as { saga: string }).saga)).toEqual([name, name, name]);
    const [first, second, third] = notices.map((n) => n.at) as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(900);
    expect(third - second).toBeGreaterThanOrEqual(1_800);
    expect(await pendingIds()).toEqual(['confirm-name']);
  });

  const pendingIds = async () => (await sagaStatus(env, name)).pending.map((p) => p.id);

  test('a caller answers only as itself; the shared secret only as SAGA_WEBHOOK_USER; nothing changes', async () => {
    const asBob = answer({ user: 'bob' });
    const cases: [string, Promise<{ status: number; body: { error?: string } }>, number, RegExp][] = [
      ['alice signs for bob', post(asBob, signed(asBob, ALICE_SECRET, 'alice')), 403, /only as 'alice'/],
      ['shared secret for alice', post(answer({}), signed(answer({}), SHARED_SECRET)), 403, /only as 'bob'/],
      ['carol claims to be alice', post(answer({}), signed(answer({}), CAROL_SECRET, 'alice')), 401, /match/],
      ['unknown caller', post(answer({}), signed(answer({}), ALICE_SECRET, 'mallory')), 401, /mallory/],
      [
        'carol is no approver',
        post(answer({ user: 'carol' }), signed(answer({ user: 'carol' }), CAROL_SECRET, 'carol')),
        403,
        /SAGA_APPROVERS/,
      ],
    ];
    for (const [label, response, status, error] of cases) {
      const res = await response;
      expect({ label, status: res.status }).toEqual({ label, status });
      expect({ label, error: res.body.error }).toEqual({ label, error: expect.stringMatching(error) });
    }
    expect(await pendingIds()).toEqual(['confirm-name']);
  });

  test('a signed answer from its caller moves the saga on; the same request again is refused (401)', async () => {
    const body = answer({});
    const headers = signed(body, ALICE_SECRET, 'alice');
    expect(await post(body, headers)).toEqual({ status: 200, body: { ok: true } });
    const next = await waitForPending(env, name, 'plan-approval-1');
    expect(next.log.join('\n')).toContain('webhook:alice answered confirm-name: confirm');

    const replay = await post(body, headers);
    expect(replay).toEqual({ status: 401, body: { ok: false, error: expect.stringMatching(/replay/i) } });

    // A refused request cannot be sent again either: the signature is spent when it is verified.
    const reject = JSON.stringify({
      saga: name,
      interaction: 'plan-approval-1',
      choice: 'nope',
      user: 'alice',
    });
    const rejectHeaders = signed(reject, ALICE_SECRET, 'alice');
    expect((await post(reject, rejectHeaders)).status).toBe(400);
    expect((await post(reject, rejectHeaders)).status).toBe(401);
    expect(await pendingIds()).toEqual(['plan-approval-1']);
  });
});

describe('chat configuration: separate secrets, one user per shared secret', () => {
  const bridgeEnv = { SAGA_APPROVERS: 'alice', SAGA_CHAT_PORT: '0' };

  test('the bridge refuses to start when the notify secret equals an answer secret (and does not print it)', () => {
    const cases: Record<string, string>[] = [
      { SAGA_WEBHOOK_CALLERS: `alice:${ALICE_SECRET}`, SAGA_NOTIFY_SECRET: ALICE_SECRET },
      { SAGA_WEBHOOK_SECRET: SHARED_SECRET, SAGA_WEBHOOK_USER: 'alice', SAGA_NOTIFY_SECRET: SHARED_SECRET },
      { SLACK_SIGNING_SECRET: SHARED_SECRET, SAGA_NOTIFY_SECRET: SHARED_SECRET },
    ];
    for (const extra of cases) {
      let message = '';
      try {
        loadBridgeConfig({ ...bridgeEnv, ...extra });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/SAGA_NOTIFY_SECRET must differ/);
      expect(message).not.toContain(extra.SAGA_NOTIFY_SECRET);
    }
  });

  test('the worker signs notifications only with SAGA_NOTIFY_SECRET, never with the answer secret', () => {
    const url = 'http://127.0.0.1:9/notify';
    expect(() => loadNotifyConfig({ SAGA_NOTIFY_URL: url, SAGA_WEBHOOK_SECRET: SHARED_SECRET })).toThrow(
      /SAGA_NOTIFY_SECRET/,
    );
    expect(() =>
      loadNotifyConfig({
        SAGA_NOTIFY_URL: url,
        SAGA_WEBHOOK_SECRET: SHARED_SECRET,
        SAGA_NOTIFY_SECRET: SHARED_SECRET,
      }),
    ).toThrow(/must differ/);
    expect(
      loadNotifyConfig({
        SAGA_NOTIFY_URL: url,
        SAGA_WEBHOOK_SECRET: SHARED_SECRET,
        SAGA_NOTIFY_SECRET: NOTIFY_SECRET,
      }).webhook,
    ).toEqual({ url, secret: NOTIFY_SECRET });
  });

  test('a shared SAGA_WEBHOOK_SECRET needs the one user it answers as; callers need id:secret', () => {
    expect(() => loadBridgeConfig({ ...bridgeEnv, SAGA_WEBHOOK_SECRET: SHARED_SECRET })).toThrow(
      /SAGA_WEBHOOK_USER/,
    );
    expect(() => loadBridgeConfig({ ...bridgeEnv, SAGA_WEBHOOK_CALLERS: 'alice' })).toThrow(/CALLER:SECRET/);
    expect(() =>
      loadBridgeConfig({ ...bridgeEnv, SAGA_WEBHOOK_CALLERS: `alice:${ALICE_SECRET},bob:${ALICE_SECRET}` }),
    ).toThrow(/share a secret/);
  });
});

describe('chat bridge HTTP server: timeouts and a connection cap', () => {
  const started: ChatBridge[] = [];
  const start = async (extra: Record<string, string>) => {
    const bridge = await startChatBridge({
      // Nothing here reaches Temporal: the requests never get past the HTTP server.
      client: undefined as never,
      host: '127.0.0.1',
      config: loadBridgeConfig({
        SAGA_APPROVERS: 'alice',
        SAGA_WEBHOOK_SECRET: SHARED_SECRET,
        SAGA_WEBHOOK_USER: 'alice',
        SAGA_CHAT_PORT: '0',
        ...extra,
      }),
    });
    started.push(bridge);
    return bridge;
  };
  afterAll(async () => {
    for (const bridge of started) await bridge.close();
  });

  /** A raw connection that sends `text` and resolves with what came back once the server closed it. */
  const rawConnection = (port: number, text: string) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    void connected.then(() => socket.write(text));
    const closed = new Promise<{ received: string; afterMs: number }>((resolve) => {
      const begin = Date.now();
      socket.once('close', () => resolve({ received, afterMs: Date.now() - begin }));
    });
    return { socket, connected, closed };
  };
  const within = async <T>(promise: Promise<T>, ms: number): Promise<T | 'still open'> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'still open'>(
      (resolve) => (timer = setTimeout(() => resolve('still open'), ms)),
    );
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  test('a client that never finishes its headers or its body is cut off after SAGA_CHAT_REQUEST_TIMEOUT_MS', async () => {
    const bridge = await start({ SAGA_CHAT_REQUEST_TIMEOUT_MS: '1000' });
    const slowHeaders = rawConnection(bridge.port, 'POST /hooks/respond HTTP/1.1\r\nHost: x\r\nX-Saga-');
    const slowBody = rawConnection(
      bridge.port,
      'POST /hooks/respond HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"saga":',
    );
    for (const connection of [slowHeaders, slowBody]) {
      const outcome = await within(connection.closed, 5_000);
      connection.socket.destroy();
      expect(outcome).not.toBe('still open');
    }
  });

  test('connections beyond SAGA_CHAT_MAX_CONNECTIONS are dropped; a freed slot serves again', async () => {
    const bridge = await start({ SAGA_CHAT_MAX_CONNECTIONS: '2' });
    const idle = [rawConnection(bridge.port, ''), rawConnection(bridge.port, '')];
    await Promise.all(idle.map((c) => c.connected));
    await sleep(200);
    const extra = rawConnection(bridge.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const outcome = await within(extra.closed, 5_000);
    extra.socket.destroy();
    expect(outcome).toMatchObject({ received: '' });

    idle[0]!.socket.destroy();
    await sleep(200);
    const status = await new Promise<number>((resolve, reject) =>
      http
        .get({ host: '127.0.0.1', port: bridge.port, path: '/healthz', agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject),
    );
    expect(status).toBe(200);
    idle[1]!.socket.destroy();
  });
});
