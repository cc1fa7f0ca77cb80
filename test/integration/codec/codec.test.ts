/**
 * On a shared server, histories must not show the saga's payloads. A whole saga runs with
 * SAGA_CODEC_KEY set (workers from the environment, a client with the codec): every payload of every history
 * of the saga, read with a client that has no codec, is `binary/encrypted` and none holds the goal or the
 * saga's name; with the codec the status reads as usual, through the library and through bin/saga (whose
 * `continue` replays the encrypted history); without the key the CLI says which variable to set. And
 * `saga dev --codec-port` serves the codec endpoint and starts its Web UI pointed at it.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { codecFromEnv, dataConverterFromEnv } from '../../../src/codec/config';
import { startCodecServer } from '../../../src/codec/server';
import { getStatus, respond, waitForStatus } from '../../../src/client/saga-client';
import { freePort } from '../../../src/worker/dev-server';
import { findTemporalBinary } from '../../../src/worker/temporal-binary';
import { PATCHES } from '../../../src/workflows/patches';
import { runSaga, SAGA_BIN } from '../../harness/cli';
import { sagaRuns } from '../../harness/fleet-saga';
import { startOneTaskSaga } from '../../harness/one-task-plan';
import { createSagaTestEnv, useEnvInProcess, type SagaTestEnv } from '../../harness/saga-env';

type Payload = temporal.api.common.v1.IPayload;

const KEY = randomBytes(32).toString('hex');
const MARKER = `zebra-${randomUUID().slice(0, 8)}`;
const GOAL = `Greet the ${MARKER} herd by name`;
const NAME = `codec-${MARKER}`;

/** Every Payload in a history, with where it is; search attributes apart (the server indexes them in clear). */
function payloadsOf(value: unknown, at: string, out: { at: string; payload: Payload }[] = []) {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return out;
  if (Array.isArray(value)) {
    value.forEach((item, i) => payloadsOf(item, `${at}[${i}]`, out));
    return out;
  }
  const record = value as Record<string, unknown>;
  const metadata = record.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === 'object' && metadata.encoding instanceof Uint8Array) {
    out.push({ at, payload: record as Payload });
    return out;
  }
  for (const [key, item] of Object.entries(record))
    if (key !== 'searchAttributes') payloadsOf(item, `${at}.${key}`, out);
  return out;
}

/**
 * `temporal workflow show` of the saga as JSON, optionally through a codec endpoint, with every payload's
 * data (base64 in that output) decoded as text.
 */
const temporalShow = (extra: string[] = []): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(
      findTemporalBinary(),
      ['workflow', 'show', '-w', `saga-${NAME}`, '--address', env.address, '--output', 'json', ...extra],
      { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`${error.message}: ${stderr}`))
          : resolve(
              [...stdout.matchAll(/"data": "([A-Za-z0-9+/=]*)"/g)]
                .map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'))
                .join('\n'),
            ),
    ),
  );

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** Every string of a history, bytes read as UTF-8. */
function strings(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(text(value));
  else if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) strings(item, out);
  return out;
}

let env: SagaTestEnv;
let codecClient: Client;

beforeAll(async () => {
  process.env.SAGA_CODEC_KEY = KEY;
  env = await createSagaTestEnv('codec');
  useEnvInProcess(env);
  await env.startWorkers(); // createSagaWorkers takes the codec from the environment
  codecClient = new Client({
    connection: env.client.connection,
    namespace: 'default',
    dataConverter: dataConverterFromEnv(),
  });
}, 60_000);

afterAll(async () => {
  delete process.env.SAGA_CODEC_KEY;
  await env?.close();
});

test('an encrypted saga: ciphertext in every history, readable with the key', async () => {
  const dir = env.tmp('codec');
  await startOneTaskSaga(codecClient, dir, NAME, GOAL);
  const pending = (id: string) => (s: { pending: { id: string }[] }) => s.pending.some((p) => p.id === id);
  await waitForStatus(codecClient, NAME, pending('confirm-name'));
  await respond(codecClient, NAME, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
  await waitForStatus(codecClient, NAME, pending('plan-approval-1'), { timeoutMs: 60_000 });
  await respond(codecClient, NAME, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
  await waitForStatus(codecClient, NAME, pending('acceptance-1'), { timeoutMs: 120_000 });

  // bin/saga with the key: status reads, and continue replays the encrypted history (no new run needed).
  const withKey = { ...env.cliEnv, SAGA_CODEC_KEY: KEY };
  const status = await runSaga(['status', NAME, '--json'], withKey);
  expect(status).toMatchObject({ code: 0, stderr: '' });
  expect(JSON.parse(status.stdout)).toMatchObject({ name: NAME, goal: GOAL, phase: 'acceptance' });
  const continued = await runSaga(['continue', NAME, '--detach'], withKey, 120_000);
  expect({ code: continued.code, stderr: continued.stderr }).toEqual({ code: 0, stderr: '' });
  expect(continued.stdout).toContain('git and the evidence agree with the record');
  expect(continued.stdout).not.toContain('cannot replay');

  // Without it: a clear error naming what to set, exit 2.
  const { SAGA_CODEC_KEY: _key, ...noKey } = withKey;
  const refused = await runSaga(['status', NAME], noKey);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('Unknown encoding: binary/encrypted');
  expect(refused.stderr).toContain('Set SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE');
  const wrongKey = await runSaga(['status', NAME], {
    ...noKey,
    SAGA_CODEC_KEY: randomBytes(32).toString('hex'),
  });
  expect(wrongKey.code).toBe(2);
  expect(wrongKey.stderr).toMatch(/A payload is encrypted with key id '[0-9a-f]{16}', which is not among/);

  await respond(codecClient, NAME, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
  const done = await waitForStatus(codecClient, NAME, (s) => s.phase === 'complete', { timeoutMs: 60_000 });
  expect(done).toMatchObject({ goal: GOAL, name: NAME });
  expect((await getStatus(codecClient, NAME)).milestones[0]!.tasks[0]).toMatchObject({
    status: 'integrated',
  });

  // The raw client (no codec) reads histories as the server's other users would.
  await expect(getStatus(env.client, NAME)).rejects.toThrow(/Unknown encoding: binary\/encrypted/);
  const runs = await sagaRuns(env, NAME);
  const ids = runs.map((r) => r.workflowId);
  expect(ids).toEqual(expect.arrayContaining([`saga-${NAME}`, `saga-${NAME}-m1t1`]));
  expect(ids.length).toBeGreaterThanOrEqual(5); // saga, planning, implementation, task, validation
  let total = 0;
  for (const run of runs) {
    const history = await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    const found = payloadsOf(history.events, run.workflowId);
    total += found.length;
    for (const { at, payload } of found) {
      // The SDK's core writes a patch marker's data (the patch id) itself, past the codec: only the id.
      if (at.includes('markerRecordedEventAttributes.details.patch-data')) {
        const marker = JSON.parse(text(payload.data)) as { id: string; deprecated: boolean };
        expect(Object.values(PATCHES)).toContain(marker.id);
        expect(marker.deprecated).toBe(false);
        continue;
      }
      expect({ at, encoding: text(payload.metadata!.encoding) }).toEqual({
        at,
        encoding: 'binary/encrypted',
      });
      const body = `${text(payload.data)} ${Object.values(payload.metadata!).map(text).join(' ')}`;
      expect({ at, hasGoal: body.includes(MARKER) }).toEqual({ at, hasGoal: false });
    }
    // Nothing else in the history holds the goal either (ids and search attributes carry only the name).
    const plain = strings(history).join('\n');
    expect({ workflow: run.workflowId, hasGoal: plain.includes(GOAL) }).toEqual({
      workflow: run.workflowId,
      hasGoal: false,
    });
  }
  expect(total).toBeGreaterThan(30);

  // Temporal's own CLI reads it through the codec endpoint (no Origin: not a browser), and not without it.
  // As `saga codec serve` makes it: for viewing (the SDK writes patch markers in plaintext).
  const endpoint = await startCodecServer({
    codec: codecFromEnv(process.env, { forViewing: true })!,
    port: 0,
  });
  try {
    expect(await temporalShow()).not.toContain(GOAL);
    expect(await temporalShow(['--codec-endpoint', endpoint.url])).toContain(GOAL);
  } finally {
    await endpoint.close();
  }
}, 300_000);

test('saga dev --codec-port: the endpoint beside the worker, and the Web UI configured to call it', async () => {
  const [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
  const home = env.tmp('dev-home');
  const devEnv = {
    ...env.cliEnv,
    SAGA_HOME: home,
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    SAGA_UI_URL: '',
    SAGA_CODEC_KEY: KEY,
  };
  const { SAGA_CODEC_KEY: _key, ...noKey } = devEnv;
  const refused = await runSaga(['dev', '--codec-port', String(codecPort)], noKey);
  expect(refused).toMatchObject({ code: 1, stdout: '' });
  expect(refused.stderr).toContain(
    'saga dev: --codec-port needs a codec key: set SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE',
  );

  const dev = spawn(
    process.execPath,
    [SAGA_BIN, 'dev', '--ui-port', String(uiPort), '--codec-port', String(codecPort)],
    { env: devEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  dev.stdout!.on('data', (d) => (output += d));
  dev.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => dev.once('exit', resolve));
  try {
    const deadline = Date.now() + 120_000;
    while (!output.includes('Press Ctrl-C to stop') && dev.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(output).toContain(`Codec endpoint for the Web UI: http://127.0.0.1:${codecPort}`);
    const ui = `http://127.0.0.1:${uiPort}`;
    const settings = (await (await fetch(`${ui}/api/v1/settings`)).json()) as {
      Codec?: { Endpoint?: string };
    };
    // The endpoint's secret is its path: without it the endpoint answers nothing.
    const endpoint = settings.Codec?.Endpoint ?? '';
    expect(endpoint).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${codecPort}/[\\w-]{16,}$`));
    expect(output).toContain(`Codec endpoint for the Web UI: ${endpoint} `);
    // The UI's origin may call it (both loopback names); the payload comes back decrypted.
    const codec = dataConverterFromEnv({ SAGA_CODEC_KEY: KEY }).payloadCodecs![0]!;
    const [encrypted] = await codec.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(GOAL)) },
    ]);
    for (const origin of [ui, `http://localhost:${uiPort}`]) {
      const res = await fetch(`${endpoint}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, 'x-namespace': 'default' },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(
                Object.entries(encrypted!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
              ),
              data: Buffer.from(encrypted!.data!).toString('base64'),
            },
          ],
        }),
      });
      expect({ origin, status: res.status, allowed: res.headers.get('access-control-allow-origin') }).toEqual(
        {
          origin,
          status: 200,
          allowed: origin,
        },
      );
      const body = (await res.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(body.payloads[0]!.data, 'base64').toString()).toBe(JSON.stringify(GOAL));
    }
  } finally {
    if (dev.exitCode === null) dev.kill('SIGINT');
    expect(await exited).toBe(0);
  }
  // Ctrl-C stopped the endpoint with the rest.
  await expect(fetch(`http://127.0.0.1:${codecPort}/decode`, { method: 'POST' })).rejects.toThrow();
}, 180_000);
