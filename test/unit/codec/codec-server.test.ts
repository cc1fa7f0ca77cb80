/**
 * The codec endpoint the Temporal Web UI calls (`saga codec serve`): POST /decode and /encode with the UI's
 * JSON bodies, CORS for the configured UI origins only (preflight included), and clear 4xx answers.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { chainedCodec, codecFromEnv, payloadCodecsFromEnv } from '../../../src/codec/config';
import { STORED_ENCODING } from '../../../src/codec/payload-store';
import { startCodecServer, uiOrigins, type CodecServer } from '../../../src/codec/server';

const UI = 'http://localhost:8233';
const key = randomBytes(32).toString('hex');
// As `saga codec serve` makes it: for viewing, plaintext payloads shown as they are.
const codec = codecFromEnv({ SAGA_CODEC_KEY: key }, { forViewing: true })!;

const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? []).toString('base64'),
});
const fromJson = (p: { metadata: Record<string, string>; data: string }): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: Buffer.from(p.data, 'base64'),
});

let server: CodecServer;
const lines: string[] = [];
beforeAll(async () => {
  server = await startCodecServer({ codec, port: 0, origins: [UI], log: (l) => lines.push(l) });
});
afterAll(() => server.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: UI, 'x-namespace': 'default', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

test('POST /encode then /decode: the UI gets the original payloads back, with CORS for its origin', async () => {
  const original = defaultPayloadConverter.toPayload({ goal: 'Ship dark mode' });
  const encoded = await post('/encode', { payloads: [toJson(original)] });
  expect(encoded.status).toBe(200);
  const encodedBody = (await encoded.json()) as {
    payloads: { metadata: Record<string, string>; data: string }[];
  };
  expect(Buffer.from(encodedBody.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe(
    'binary/encrypted',
  );
  expect(Buffer.from(encodedBody.payloads[0]!.data, 'base64').toString()).not.toContain('dark mode');

  const decoded = await post('/decode', encodedBody);
  expect(decoded.status).toBe(200);
  expect(decoded.headers.get('access-control-allow-origin')).toBe(UI);
  expect(decoded.headers.get('vary')).toBe('Origin');
  const body = (await decoded.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
  expect(defaultPayloadConverter.fromPayload(fromJson(body.payloads[0]!))).toEqual({
    goal: 'Ship dark mode',
  });
});

test('unencrypted payloads pass through /decode; a request without Origin (curl) is served', async () => {
  const plain = toJson(defaultPayloadConverter.toPayload('plain text'));
  const res = await fetch(`${server.url}/decode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ payloads: [plain] }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  expect(await res.json()).toEqual({ payloads: [plain] });
});

test("the UI's preflight: its origin, POST and the X-Namespace and Content-Type headers are allowed", async () => {
  const res = await fetch(`${server.url}/decode`, {
    method: 'OPTIONS',
    headers: {
      origin: UI,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-namespace',
    },
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-origin')).toBe(UI);
  expect(res.headers.get('access-control-allow-methods')).toContain('POST');
  const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
  expect(allowed).toContain('x-namespace');
  expect(allowed).toContain('content-type');
});

test('another origin is refused, preflight and request alike, with no CORS grant', async () => {
  const evil = 'http://evil.example';
  const preflight = await fetch(`${server.url}/decode`, {
    method: 'OPTIONS',
    headers: { origin: evil, 'access-control-request-method': 'POST' },
  });
  expect(preflight.status).toBe(403);
  expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  const res = await post('/decode', { payloads: [] }, { origin: evil });
  expect(res.status).toBe(403);
  expect(((await res.json()) as { error: string }).error).toContain(`--origin ${evil}`);
});

test.each([
  ['not JSON', '{payloads', 400, /not JSON/],
  ['no payloads', { nope: [] }, 400, /Expected \{payloads: \[\{metadata, data\}\]\}: payloads: Required/],
  [
    'data not base64',
    { payloads: [{ metadata: {}, data: '***' }] },
    400,
    /payloads\.0\.data: expected base64/,
  ],
])('a bad body is a 400 naming what is wrong: %s', async (_label, body, status, message) => {
  const res = await post('/decode', body);
  expect(res.status).toBe(status);
  expect(((await res.json()) as { error: string }).error).toMatch(message);
});

test('a payload of another key is a 400 naming its key id; the body is never logged', async () => {
  const other = codecFromEnv({
    SAGA_CODEC_KEY: randomBytes(32).toString('hex'),
    SAGA_CODEC_KEY_ID: 'other',
  })!;
  const [encrypted] = await other.encode([defaultPayloadConverter.toPayload('secret goal')]);
  const res = await post('/decode', { payloads: [toJson(encrypted!)] });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: string }).error).toContain("key id 'other'");
  expect(lines.join('\n')).not.toContain('secret goal');
  expect(lines).toContain('POST /decode → 400');
});

test('other paths are 404, other methods 405', async () => {
  expect((await post('/decrypt', { payloads: [] })).status).toBe(404);
  const get = await fetch(`${server.url}/decode`, { headers: { origin: UI } });
  expect(get.status).toBe(405);
  expect(get.headers.get('allow')).toBe('POST, OPTIONS');
});

test("the Web UI's origins: both loopback names for a local UI, the origin itself otherwise", () => {
  expect(uiOrigins('http://127.0.0.1:9233')).toEqual(['http://localhost:9233', 'http://127.0.0.1:9233']);
  expect(uiOrigins('https://temporal.example.com/ui')).toEqual(['https://temporal.example.com']);
  expect(uiOrigins(null)).toEqual(['http://localhost:8233', 'http://127.0.0.1:8233']);
});

test('a port in use is an error naming the address', async () => {
  await expect(startCodecServer({ codec, port: server.port })).rejects.toThrow(
    new RegExp(`^The codec endpoint cannot listen on 127\\.0\\.0\\.1:${server.port}: .*EADDRINUSE`),
  );
});

test('with the payload store chained (saga codec serve): a stored payload decodes to the original', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'codec-store-'));
  const env = { SAGA_CODEC_KEY: key, SAGA_PAYLOAD_DIR: dir, SAGA_PAYLOAD_STORE_OVER: '1024' };
  const chained = chainedCodec(payloadCodecsFromEnv(env));
  const storing = await startCodecServer({ codec: chained, port: 0, origins: [UI], log: () => undefined });
  try {
    const plan = { goal: 'Ship dark mode', notes: 'n'.repeat(4_000) };
    // What the workers write: encrypted, then stored, leaving a reference in history.
    const [reference] = await chained.encode([defaultPayloadConverter.toPayload(plan)]);
    expect(Buffer.from(reference!.metadata!.encoding!).toString()).toBe(STORED_ENCODING);
    expect(readdirSync(dir, { recursive: true }).length).toBeGreaterThan(0);
    const decoded = await fetch(`${storing.url}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: UI },
      body: JSON.stringify({ payloads: [toJson(reference!)] }),
    });
    expect(decoded.status).toBe(200);
    const body = (await decoded.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(defaultPayloadConverter.fromPayload(fromJson(body.payloads[0]!))).toEqual(plan);
  } finally {
    await storing.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
