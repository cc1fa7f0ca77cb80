/**
 * The codec endpoint's doors: with a secret it answers only under `/<secret>/` (the Web UI takes the endpoint
 * as a URL and sends no header of ours); a body that is not JSON (a cross-site text/plain POST needs no
 * preflight) and another origin are refused; the secret comes from a file or SAGA_CODEC_ENDPOINT_TOKEN and
 * must be URL-safe and long.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codecFromEnv } from '../../../src/codec/config';
import { codecSecretFrom, startCodecServer, type CodecServer } from '../../../src/codec/server';

const UI = 'http://127.0.0.1:8233';
const SECRET = 'endpoint-secret-0123456789';
const codec = codecFromEnv({ SAGA_CODEC_KEY: randomBytes(32).toString('hex') }, { forViewing: true })!;
let server: CodecServer;
const lines: string[] = [];
beforeAll(async () => {
  server = await startCodecServer({
    codec,
    port: 0,
    origins: [UI],
    secret: SECRET,
    log: (l) => lines.push(l),
  });
});
afterAll(() => server.close());

const base = () => `http://127.0.0.1:${server.port}`;
const body = JSON.stringify({
  payloads: [
    {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"x"').toString('base64'),
    },
  ],
});
const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: UI, ...headers },
    body,
  });

test('its URL ends with the secret, and only there it answers', async () => {
  expect(server.url).toBe(`${base()}/${SECRET}`);
  expect((await post(`${server.url}/decode`)).status).toBe(200);
  for (const url of [
    `${base()}/decode`,
    `${base()}/wrong-secret-0123456789/decode`,
    `${base()}/${SECRET}x/decode`,
  ])
    expect({ url, status: (await post(url)).status }).toEqual({ url, status: 404 });
  expect(lines.join('\n')).not.toContain(SECRET);
});

test('a text/plain body is refused (415), and another origin (403), even at the right URL', async () => {
  expect((await post(`${server.url}/decode`, { 'content-type': 'text/plain' })).status).toBe(415);
  expect(
    (await post(`${server.url}/decode`, { 'content-type': 'text/plain', origin: 'http://evil.example' }))
      .status,
  ).toBe(403);
});

test('the secret from a file, the environment, or a fresh one; a short or unsafe one is refused', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'codec-secret-'));
  const file = path.join(dir, 'secret');
  writeFileSync(file, `${SECRET}\n`);
  expect(codecSecretFrom(file, {})).toBe(SECRET);
  expect(codecSecretFrom(undefined, { SAGA_CODEC_ENDPOINT_TOKEN: SECRET })).toBe(SECRET);
  const fresh = codecSecretFrom(undefined, {});
  expect(fresh).toMatch(/^[\w-]{32}$/);
  expect(fresh).not.toBe(codecSecretFrom(undefined, {}));
  expect(() => codecSecretFrom(undefined, { SAGA_CODEC_ENDPOINT_TOKEN: 'short' })).toThrow(/16 to 200/);
  expect(() => codecSecretFrom(undefined, { SAGA_CODEC_ENDPOINT_TOKEN: 'has/a/slash/0123456789' })).toThrow(
    /16 to 200/,
  );
  expect(() => codecSecretFrom(path.join(dir, 'missing'), {})).toThrow(/cannot read it/);
});
