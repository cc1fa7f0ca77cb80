/**
 * The payload codec's keys, from the environment. Every client, worker and replayer of this project takes
 * its data converter from `dataConverterFromEnv()`, so one setting encrypts everything or nothing.
 *
 *   SAGA_CODEC_KEY        the key: 64 hex characters or base64 of 32 bytes (`openssl rand -hex 32`)
 *   SAGA_CODEC_KEY_FILE   or a file holding it: 32 raw bytes, 64 hex characters or base64
 *   SAGA_CODEC_KEY_ID     its id, stored in each payload (default: derived from a hash of the key)
 *   SAGA_CODEC_OLD_KEYS   earlier keys, decrypt only, for rotation: `ID:KEY,ID:KEY` (or bare `KEY`s,
 *                         whose id is derived as above)
 *   SAGA_CODEC_ALLOW_PLAINTEXT  1: also accept payloads that are not encrypted (sagas from before the key);
 *                         unset, a payload in plaintext is refused, so nobody who merely reaches the server
 *                         can start or signal a saga
 *
 * No key set: no codec, payloads stay as they were. Any of the other settings without a key is an error,
 * so a typo in a variable name never silently means "unencrypted".
 *
 * Large payloads go to the payload store whatever the key (payload-store.ts):
 *
 *   SAGA_PAYLOAD_DIR         the store (default: payloads/ in the saga home); shared by every host that runs
 *                            or reads sagas of the namespace
 *   SAGA_PAYLOAD_STORE_OVER  payloads over this many bytes are stored (default 262144)
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { sagaHomeOf } from '../domain/config/saga-home';
import { CodecError, EncryptionCodec, KEY_BYTES } from './encryption-codec';
import { DEFAULT_STORE_OVER_BYTES, PayloadStoreCodec } from './payload-store';

export const CODEC_ENV = {
  key: 'SAGA_CODEC_KEY',
  keyFile: 'SAGA_CODEC_KEY_FILE',
  keyId: 'SAGA_CODEC_KEY_ID',
  oldKeys: 'SAGA_CODEC_OLD_KEYS',
  allowPlaintext: 'SAGA_CODEC_ALLOW_PLAINTEXT',
  payloadDir: 'SAGA_PAYLOAD_DIR',
  storeOver: 'SAGA_PAYLOAD_STORE_OVER',
} as const;

/** The key id travels in every payload's metadata and in error messages: short and plain. */
const KeyId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'expected 1-64 letters, digits, dots, dashes or underscores');

const EXPECTED_TEXT = `64 hex characters or base64 of ${KEY_BYTES} bytes (make one with \`openssl rand -hex 32\`)`;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/** A key written as text (hex or base64); null when it is neither. */
function keyFromText(value: string): Buffer | null {
  const trimmed = value.trim();
  if (HEX_KEY.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (BASE64_KEY.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === KEY_BYTES) return bytes;
  }
  return null;
}

/** Derived, not secret: a truncated hash of the key under its own label, so it identifies and reveals nothing. */
export function deriveKeyId(key: Buffer): string {
  return createHash('sha256').update('saga-codec-key-id\0').update(key).digest('hex').slice(0, 16);
}

function keyFromVariable(value: string, name: string): Buffer {
  const key = keyFromText(value);
  if (!key)
    throw new CodecError(
      `${name} is not a valid key: expected ${EXPECTED_TEXT}; it has ${value.trim().length} characters.`,
    );
  return key;
}

function keyFromFile(file: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new CodecError(`${CODEC_ENV.keyFile}: cannot read ${file} (${(error as Error).message}).`);
  }
  if (bytes.length === KEY_BYTES) return bytes;
  const key = keyFromText(bytes.toString('utf8'));
  if (!key)
    throw new CodecError(
      `${CODEC_ENV.keyFile} (${file}) does not hold a valid key: expected ${KEY_BYTES} raw bytes or ${EXPECTED_TEXT}; ` +
        `the file has ${bytes.length} bytes.`,
    );
  return key;
}

function keyId(value: string, name: string): string {
  const parsed = KeyId.safeParse(value.trim());
  if (!parsed.success)
    throw new CodecError(`${name}: '${value}' is not a valid key id: ${parsed.error.issues[0]!.message}.`);
  return parsed.data;
}

/** `ID:KEY,KEY,...` of SAGA_CODEC_OLD_KEYS. */
function oldKeys(value: string): [string, Buffer][] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry, index) => {
      const at = `${CODEC_ENV.oldKeys} entry ${index + 1}`;
      const colon = entry.indexOf(':');
      const key = keyFromVariable(colon < 0 ? entry : entry.slice(colon + 1), at);
      return [colon < 0 ? deriveKeyId(key) : keyId(entry.slice(0, colon), at), key];
    });
}

type Env = Readonly<Record<string, string | undefined>>;

const setting = (env: Env, name: string): string | undefined => {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
};

/**
 * The codec the environment asks for; null when no key is set. Bad settings throw a CodecError naming them.
 * `forViewing` (the Web UI's codec endpoint): plaintext payloads pass, to be shown as they are.
 */
export function codecFromEnv(
  env: Env = process.env,
  { forViewing = false }: { forViewing?: boolean } = {},
): EncryptionCodec | null {
  const inline = setting(env, CODEC_ENV.key);
  const file = setting(env, CODEC_ENV.keyFile);
  if (inline && file)
    throw new CodecError(
      `Set ${CODEC_ENV.key} or ${CODEC_ENV.keyFile}, not both: which key is meant is unclear.`,
    );
  if (!inline && !file) {
    const orphan = [CODEC_ENV.keyId, CODEC_ENV.oldKeys, CODEC_ENV.allowPlaintext].find((name) =>
      setting(env, name),
    );
    if (orphan)
      throw new CodecError(
        `${orphan} is set but no key is: set ${CODEC_ENV.key} or ${CODEC_ENV.keyFile} (or unset ${orphan}).`,
      );
    return null;
  }
  const current = inline ? keyFromVariable(inline, CODEC_ENV.key) : keyFromFile(file!);
  const idText = setting(env, CODEC_ENV.keyId);
  const currentId = idText ? keyId(idText, CODEC_ENV.keyId) : deriveKeyId(current);
  const keys = new Map<string, Buffer>([[currentId, current]]);
  for (const [id, key] of oldKeys(setting(env, CODEC_ENV.oldKeys) ?? '')) {
    const known = keys.get(id);
    if (known && !known.equals(key))
      throw new CodecError(
        `${CODEC_ENV.oldKeys} gives key id '${id}' a different key than ${id === currentId ? 'the current key' : 'an earlier entry'}.`,
      );
    keys.set(id, key);
  }
  return new EncryptionCodec({ currentId, keys }, { requireEncryption: !forViewing && !allowPlaintext(env) });
}

function allowPlaintext(env: Env): boolean {
  const value = setting(env, CODEC_ENV.allowPlaintext);
  if (value === undefined || ['0', 'false', 'no'].includes(value.trim().toLowerCase())) return false;
  if (['1', 'true', 'yes'].includes(value.trim().toLowerCase())) return true;
  throw new CodecError(`${CODEC_ENV.allowPlaintext} is '${value}': expected 1 (accept plaintext) or 0.`);
}

/** The payload store the environment names (SAGA_PAYLOAD_DIR, SAGA_PAYLOAD_STORE_OVER); bad settings throw. */
export function payloadStoreFromEnv(env: Env = process.env): PayloadStoreCodec {
  const over = setting(env, CODEC_ENV.storeOver);
  const overBytes = over === undefined ? DEFAULT_STORE_OVER_BYTES : Number(over);
  if (!Number.isInteger(overBytes) || overBytes < 1024)
    throw new CodecError(`${CODEC_ENV.storeOver} must be a whole number of bytes from 1024, got '${over}'.`);
  const dir = setting(env, CODEC_ENV.payloadDir);
  if (dir !== undefined && !path.isAbsolute(dir))
    throw new CodecError(`${CODEC_ENV.payloadDir} must be an absolute path, got '${dir}'.`);
  return new PayloadStoreCodec({
    dir: dir ?? path.join(sagaHomeOf(env, os.homedir()), 'payloads'),
    overBytes,
  });
}

/**
 * The data converter for every Client, Worker and replay: encryption when a key is set, then the payload
 * store for large payloads (encrypted first, so the store holds ciphertext).
 */
export function dataConverterFromEnv(env: Env = process.env): DataConverter {
  return { payloadCodecs: payloadCodecsFromEnv(env) };
}

/** The codecs of dataConverterFromEnv, in the SDK's order (encode first to last, decode last to first). */
export function payloadCodecsFromEnv(env: Env = process.env): PayloadCodec[] {
  const codec = codecFromEnv(env);
  return [...(codec ? [codec] : []), payloadStoreFromEnv(env)];
}

/** The codecs as one, in the order the SDK applies them (the codec endpoint serves them so). */
export function chainedCodec(codecs: PayloadCodec[]): PayloadCodec {
  return {
    async encode(payloads) {
      for (const codec of codecs) payloads = await codec.encode(payloads);
      return payloads;
    },
    async decode(payloads) {
      for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
      return payloads;
    },
  };
}
