/**
 * The payload store (no payload cliff at any saga size): payloads over the threshold go to a
 * content-addressed file and travel as a small reference; smaller ones pass untouched; a store another
 * process cannot read, or an altered file, is refused naming what to set; with a key the store holds only
 * ciphertext; bad settings are named.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { dataConverterFromEnv, payloadStoreFromEnv } from '../../../src/codec/config';
import { CodecError } from '../../../src/codec/encryption-codec';
import { isStored, PayloadStoreCodec, STORED_ENCODING } from '../../../src/codec/payload-store';

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const payloadOf = (value: unknown): Payload => {
  const p = defaultPayloadConverter.toPayload(value);
  return { metadata: p.metadata, data: p.data ?? new Uint8Array() };
};
/** A plan-like value of about `bytes` bytes of JSON. */
const bigValue = (bytes: number) => ({
  tasks: Array.from({ length: bytes / 100 }, (_, i) => `task ${i} `.padEnd(96, '.')),
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'payload-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** All files in the store. */
const stored = () => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());

test('a payload over the threshold is stored once and comes back whole; a small one passes untouched', async () => {
  const codec = new PayloadStoreCodec({ dir, overBytes: 4096 });
  const big = payloadOf(bigValue(3 * 1024 * 1024)); // over Temporal's 2 MB limit
  const small = payloadOf({ goal: 'Ship dark mode' });
  const [ref, same, kept] = await codec.encode([big, big, small]);
  expect(isStored(ref!)).toBe(true);
  expect(text(ref!.metadata!.encoding)).toBe(STORED_ENCODING);
  expect(ref!.data).toHaveLength(0);
  expect(same).toEqual(ref);
  expect(kept).toBe(small);
  expect(stored()).toHaveLength(1);
  const [back, smallBack] = await codec.decode([ref!, kept!]);
  expect(defaultPayloadConverter.fromPayload(back!)).toEqual(bigValue(3 * 1024 * 1024));
  expect(smallBack).toBe(small);
});

test('a store this process cannot read, or an altered file, is refused naming what to set', async () => {
  const codec = new PayloadStoreCodec({ dir, overBytes: 4096 });
  const [ref] = await codec.encode([payloadOf(bigValue(10_000))]);
  const elsewhere = new PayloadStoreCodec({ dir: path.join(dir, 'other-host'), overBytes: 4096 });
  const missing = elsewhere.decode([ref!]);
  await expect(missing).rejects.toThrow(CodecError);
  await expect(missing).rejects.toThrow(
    /cannot read \(ENOENT\)\. Set SAGA_PAYLOAD_DIR to the store the workers write/,
  );
  const file = path.join(
    dir,
    stored()[0]!.parentPath ? path.relative(dir, stored()[0]!.parentPath) : '',
    stored()[0]!.name,
  );
  writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('x')]));
  await expect(codec.decode([ref!])).rejects.toThrow(/does not match its hash: it was altered/);
});

test('with a key the store holds only ciphertext, and the data converter reads it back', async () => {
  const env = {
    SAGA_CODEC_KEY: randomBytes(32).toString('hex'),
    SAGA_PAYLOAD_DIR: dir,
    SAGA_PAYLOAD_STORE_OVER: '4096',
  };
  const codecs = dataConverterFromEnv(env).payloadCodecs as PayloadCodec[];
  const marker = `zebra-${randomBytes(4).toString('hex')}`;
  let payloads = [payloadOf({ ...bigValue(20_000), marker })];
  for (const codec of codecs) payloads = await codec.encode(payloads);
  expect(isStored(payloads[0]!)).toBe(true);
  const file = stored()[0]!;
  expect(readFileSync(path.join(file.parentPath ?? dir, file.name)).toString('latin1')).not.toContain(marker);
  for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
  expect(defaultPayloadConverter.fromPayload<{ marker: string }>(payloads[0]!).marker).toBe(marker);
});

test('bad settings are named; the default store is in the saga home', () => {
  expect(() => payloadStoreFromEnv({ SAGA_PAYLOAD_STORE_OVER: 'lots' })).toThrow(
    "SAGA_PAYLOAD_STORE_OVER must be a whole number of bytes from 1024, got 'lots'.",
  );
  expect(() => payloadStoreFromEnv({ SAGA_PAYLOAD_DIR: 'relative/dir' })).toThrow(
    "SAGA_PAYLOAD_DIR must be an absolute path, got 'relative/dir'.",
  );
  expect(payloadStoreFromEnv({ SAGA_HOME: '/srv/sagas' }).dir).toBe('/srv/sagas/payloads');
});
