/**
 * The AES-256-GCM payload codec and its keys from the environment: round trip, the wire format of
 * Temporal's encryption sample, unencrypted payloads passing through, wrong keys and altered ciphertext
 * refused with errors that name the key id and what to set, rotation, and bad settings named.
 */
import { randomBytes, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { codecFromEnv, dataConverterFromEnv, deriveKeyId } from '../../../src/codec/config';
import { CodecError, EncryptionCodec, isEncrypted } from '../../../src/codec/encryption-codec';
import { isWorkerSecret } from '../../../src/domain/config/agent-env';

const GOAL = 'Ship dark mode for the billing page';
const keyA = randomBytes(32);
const keyB = randomBytes(32);
const hex = (key: Buffer) => key.toString('hex');
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** As the server would return them: protobuf has no absent bytes, only empty ones (binary/null has none). */
const payloads = (): Payload[] =>
  [
    defaultPayloadConverter.toPayload({ goal: GOAL, lanes: 2 }),
    defaultPayloadConverter.toPayload(null),
    defaultPayloadConverter.toPayload(undefined),
    defaultPayloadConverter.toPayload(new Uint8Array([0, 1, 2, 255])),
  ].map((p) => ({ metadata: p.metadata, data: p.data ?? new Uint8Array() }));

const codecWith = (env: Record<string, string>) => codecFromEnv(env)!;

describe('EncryptionCodec', () => {
  const codec = codecWith({ SAGA_CODEC_KEY: hex(keyA) });

  test('round trip: every payload comes back as it went in', async () => {
    const original = payloads();
    const encoded = await codec.encode(original);
    const decoded = await codec.decode(encoded);
    expect(decoded).toEqual(original);
    expect(defaultPayloadConverter.fromPayload(decoded[0]!)).toEqual({ goal: GOAL, lanes: 2 });
  });

  test('encoded payloads carry binary/encrypted and the key id, and no plain text', async () => {
    const [encoded] = await codec.encode([defaultPayloadConverter.toPayload({ goal: GOAL })]);
    expect(text(encoded!.metadata!.encoding)).toBe('binary/encrypted');
    expect(text(encoded!.metadata!['encryption-key-id'])).toBe(deriveKeyId(keyA));
    expect(Object.keys(encoded!.metadata!).sort()).toEqual(['encoding', 'encryption-key-id']);
    expect(text(encoded!.data)).not.toContain('dark mode');
    expect(text(encoded!.data)).not.toContain('json/plain');
    expect(isEncrypted(encoded!)).toBe(true);
    // A fresh IV each time: the same payload never encrypts to the same bytes.
    const [again] = await codec.encode([defaultPayloadConverter.toPayload({ goal: GOAL })]);
    expect(Buffer.from(again!.data!).equals(Buffer.from(encoded!.data!))).toBe(false);
  });

  test("the data is Temporal's sample format: IV (12) + AES-GCM ciphertext + tag of the Payload protobuf", async () => {
    const original = defaultPayloadConverter.toPayload({ goal: GOAL });
    const [encoded] = await codec.encode([original]);
    const data = Buffer.from(encoded!.data!);
    // WebCrypto, as the sample's codec server decrypts.
    const key = await webcrypto.subtle.importKey('raw', keyA, 'AES-GCM', false, ['decrypt']);
    const plain = await webcrypto.subtle.decrypt(
      { name: 'AES-GCM', iv: data.subarray(0, 12) },
      key,
      data.subarray(12),
    );
    const decoded = temporal.api.common.v1.Payload.decode(new Uint8Array(plain));
    expect(defaultPayloadConverter.fromPayload({ metadata: decoded.metadata, data: decoded.data })).toEqual({
      goal: GOAL,
    });
  });

  test('with SAGA_CODEC_ALLOW_PLAINTEXT=1, unencrypted payloads pass through decode untouched (histories from before the codec)', async () => {
    const plain = payloads();
    const lenient = codecWith({ SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_ALLOW_PLAINTEXT: '1' });
    const decoded = await lenient.decode(plain);
    decoded.forEach((p, i) => expect(p).toBe(plain[i]));
  });

  test('a key this process does not have: the error names the key id and what to set', async () => {
    const encoded = await codec.encode(payloads());
    const other = codecWith({ SAGA_CODEC_KEY: hex(keyB) });
    const error = await other.decode(encoded).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodecError);
    expect((error as Error).message).toContain(`key id '${deriveKeyId(keyA)}'`);
    expect((error as Error).message).toContain(`'${deriveKeyId(keyB)}'`);
    expect((error as Error).message).toMatch(/SAGA_CODEC_KEY.*SAGA_CODEC_OLD_KEYS/s);
    expect((error as Error).message).not.toContain(hex(keyA));
  });

  test('a wrong key under the same id fails authentication, with a clear error', async () => {
    const one = codecWith({ SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_KEY_ID: 'prod' });
    const wrong = codecWith({ SAGA_CODEC_KEY: hex(keyB), SAGA_CODEC_KEY_ID: 'prod' });
    const encoded = await one.encode(payloads());
    await expect(wrong.decode(encoded)).rejects.toThrow(
      /Cannot decrypt a payload with key id 'prod': authentication failed.*not the one it was encrypted with, or the payload was altered/,
    );
  });

  test.each([
    ['a flipped ciphertext byte', (d: Buffer) => (d[20] ^= 0x01)],
    ['a flipped IV byte', (d: Buffer) => (d[0] ^= 0x80)],
    ['a flipped tag byte', (d: Buffer) => (d[d.length - 1] ^= 0x01)],
  ])('tampered ciphertext is refused: %s', async (_label, tamper) => {
    const [encoded] = await codec.encode([defaultPayloadConverter.toPayload({ goal: GOAL })]);
    const data = Buffer.from(encoded!.data!);
    tamper(data);
    await expect(codec.decode([{ ...encoded!, data: new Uint8Array(data) }])).rejects.toThrow(
      /authentication failed/,
    );
  });

  test('truncated data and a missing key id are refused', async () => {
    const [encoded] = await codec.encode([defaultPayloadConverter.toPayload('x')]);
    await expect(codec.decode([{ ...encoded!, data: encoded!.data!.subarray(0, 20) }])).rejects.toThrow(
      /fewer than an IV and a tag/,
    );
    await expect(
      codec.decode([{ metadata: { encoding: encoded!.metadata!.encoding! }, data: encoded!.data! }]),
    ).rejects.toThrow(/no 'encryption-key-id'/);
  });

  test('rotation: the new key encrypts, an old key listed in SAGA_CODEC_OLD_KEYS still decrypts', async () => {
    const oldCodec = codecWith({ SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_KEY_ID: 'k2025' });
    const oldPayloads = await oldCodec.encode(payloads());
    const rotated = codecWith({
      SAGA_CODEC_KEY: keyB.toString('base64'),
      SAGA_CODEC_KEY_ID: 'k2026',
      SAGA_CODEC_OLD_KEYS: `k2025:${hex(keyA)}, ${randomBytes(32).toString('base64')}`,
    });
    expect(await rotated.decode(oldPayloads)).toEqual(payloads());
    const [fresh] = await rotated.encode([defaultPayloadConverter.toPayload(1)]);
    expect(text(fresh!.metadata!['encryption-key-id'])).toBe('k2026');
    // A bare old key gets its derived id.
    const bare = codecWith({ SAGA_CODEC_KEY: hex(keyB), SAGA_CODEC_OLD_KEYS: hex(keyA) });
    expect(await bare.decode(await codec.encode(payloads()))).toEqual(payloads());
  });
});

describe('keys from the environment', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'saga-codec-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('no key: no encryption, only the payload store for large payloads', () => {
    expect(codecFromEnv({})).toBeNull();
    const kinds = (env: Record<string, string>) =>
      dataConverterFromEnv(env).payloadCodecs!.map((c) => c.constructor.name);
    expect(kinds({ SAGA_CODEC_KEY: '  ' })).toEqual(['PayloadStoreCodec']);
    expect(kinds({ SAGA_CODEC_KEY: hex(keyA) })).toEqual(['EncryptionCodec', 'PayloadStoreCodec']);
  });

  test('the key as 64 hex characters, base64 or base64url, with the same derived id', () => {
    const ids = [
      hex(keyA),
      hex(keyA).toUpperCase(),
      keyA.toString('base64'),
      keyA.toString('base64url'),
      ` ${hex(keyA)}\n`,
    ].map((value) => codecWith({ SAGA_CODEC_KEY: value }).keyId);
    expect(new Set(ids)).toEqual(new Set([deriveKeyId(keyA)]));
    expect(deriveKeyId(keyA)).toMatch(/^[0-9a-f]{16}$/);
    expect(deriveKeyId(keyB)).not.toBe(deriveKeyId(keyA));
  });

  test('the key from a file: 32 raw bytes, hex or base64 with a newline', () => {
    const files = {
      raw: keyA,
      hex: `${hex(keyA)}\n`,
      base64: `${keyA.toString('base64')}\n`,
    };
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(dir, name);
      writeFileSync(file, content);
      expect(codecWith({ SAGA_CODEC_KEY_FILE: file }).keyId).toBe(deriveKeyId(keyA));
    }
  });

  test.each([
    [
      { SAGA_CODEC_KEY: 'hunter2' },
      /^SAGA_CODEC_KEY is not a valid key: expected 64 hex characters or base64 of 32 bytes.*it has 7 characters/,
    ],
    [{ SAGA_CODEC_KEY: 'ab'.repeat(16) }, /^SAGA_CODEC_KEY is not a valid key: .*it has 32 characters/],
    [{ SAGA_CODEC_KEY: randomBytes(16).toString('base64') }, /^SAGA_CODEC_KEY is not a valid key/],
    [{ SAGA_CODEC_KEY_FILE: '/no/such/key' }, /^SAGA_CODEC_KEY_FILE: cannot read \/no\/such\/key/],
    [
      { SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_KEY_FILE: '/x' },
      /Set SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE, not both/,
    ],
    [
      { SAGA_CODEC_KEY_ID: 'prod' },
      /^SAGA_CODEC_KEY_ID is set but no key is: set SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE/,
    ],
    [{ SAGA_CODEC_OLD_KEYS: hex(keyA) }, /^SAGA_CODEC_OLD_KEYS is set but no key is/],
    [
      { SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_KEY_ID: 'has space' },
      /^SAGA_CODEC_KEY_ID: 'has space' is not a valid key id/,
    ],
    [
      { SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_OLD_KEYS: 'old:nope' },
      /^SAGA_CODEC_OLD_KEYS entry 1 is not a valid key/,
    ],
    [
      { SAGA_CODEC_KEY: hex(keyA), SAGA_CODEC_KEY_ID: 'k', SAGA_CODEC_OLD_KEYS: `k:${hex(keyB)}` },
      /SAGA_CODEC_OLD_KEYS gives key id 'k' a different key than the current key/,
    ],
  ])('bad settings are named with what is expected: %j', (env, message) => {
    let error: unknown;
    try {
      codecFromEnv(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CodecError);
    expect((error as Error).message).toMatch(message);
    // The message never repeats key material.
    for (const value of Object.values(env))
      if (value.length >= 32) expect((error as Error).message).not.toContain(value);
  });

  test('a key file that is not a key: named, with its size', () => {
    const file = path.join(dir, 'short');
    writeFileSync(file, 'not a key\n');
    expect(() => codecFromEnv({ SAGA_CODEC_KEY_FILE: file })).toThrow(
      `SAGA_CODEC_KEY_FILE (${file}) does not hold a valid key: expected 32 raw bytes or 64 hex characters or base64 of 32 bytes`,
    );
  });

  test('the codec settings are worker secrets: never passed to agents or checks', () => {
    for (const name of [
      'SAGA_CODEC_KEY',
      'SAGA_CODEC_KEY_FILE',
      'SAGA_CODEC_KEY_ID',
      'SAGA_CODEC_OLD_KEYS',
      'saga_codec_key',
    ])
      expect({ name, secret: isWorkerSecret(name) }).toEqual({ name, secret: true });
  });
});

describe('EncryptionCodec construction', () => {
  test('refuses a key of the wrong length and a current id without a key', () => {
    expect(() => new EncryptionCodec({ currentId: 'a', keys: new Map([['a', randomBytes(16)]]) })).toThrow(
      /AES-256 needs 32/,
    );
    expect(() => new EncryptionCodec({ currentId: 'b', keys: new Map([['a', keyA]]) })).toThrow(
      /No key with the current key id 'b'/,
    );
  });
});
