/**
 * AES-256-GCM payload codec: on a shared Temporal server whoever can read histories reads every
 * goal, plan and answer; with this codec the server stores only ciphertext. Same wire format as Temporal's
 * encryption sample (metadata `encoding: binary/encrypted` and `encryption-key-id`; data = 12-byte IV,
 * ciphertext, 16-byte tag of the serialized Payload protobuf), so its codec servers and tools interoperate.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCODING_KEY = 'encoding';
export const METADATA_KEY_ID = 'encryption-key-id';

const ALGORITHM = 'aes-256-gcm';
export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A codec setting, payload or endpoint that cannot be used: says what is wrong and what to set (never key
 * material). The CLI reports it as an environment error (exit 2).
 */
export class CodecError extends Error {
  override name = 'CodecError';
}

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
export const text = (bytes: Uint8Array | null | undefined): string | undefined =>
  bytes ? new TextDecoder().decode(bytes) : undefined;

export const isEncrypted = (payload: Payload): boolean =>
  text(payload.metadata?.[METADATA_ENCODING_KEY]) === ENCRYPTED_ENCODING;

export interface CodecKeys {
  /** Id of the key new payloads are encrypted with (stored in each payload's metadata). */
  currentId: string;
  /** Every key this process can decrypt with, by id; includes the current one. */
  keys: ReadonlyMap<string, Buffer>;
}

export class EncryptionCodec implements PayloadCodec {
  private readonly current: Buffer;

  constructor(private readonly config: CodecKeys) {
    for (const [id, key] of config.keys)
      if (key.length !== KEY_BYTES)
        throw new CodecError(`Key '${id}' has ${key.length} bytes; AES-256 needs ${KEY_BYTES}.`);
    const current = config.keys.get(config.currentId);
    if (!current) throw new CodecError(`No key with the current key id '${config.currentId}'.`);
    this.current = current;
  }

  get keyId(): string {
    return this.config.currentId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encryptOne(payload));
  }

  /** Payloads that are not encrypted pass through: histories written before the codec was set still read. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.decryptOne(payload) : payload));
  }

  private encryptOne(payload: Payload): Payload {
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current, iv);
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING),
        [METADATA_KEY_ID]: utf8(this.config.currentId),
      },
      data: new Uint8Array(sealed),
    };
  }

  private decryptOne(payload: Payload): Payload {
    const keyId = text(payload.metadata?.[METADATA_KEY_ID]);
    if (!keyId) throw new CodecError(`An encrypted payload has no '${METADATA_KEY_ID}' in its metadata.`);
    const key = this.config.keys.get(keyId);
    if (!key)
      throw new CodecError(
        `A payload is encrypted with key id '${keyId}', which is not among this process's keys ` +
          `(${[...this.config.keys.keys()].map((id) => `'${id}'`).join(', ')}). Set SAGA_CODEC_KEY (or ` +
          `SAGA_CODEC_KEY_FILE) to that key, or list it in SAGA_CODEC_OLD_KEYS as ${keyId}:KEY.`,
      );
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new CodecError(
        `A payload encrypted with key id '${keyId}' has ${data.length} bytes of data, fewer than an IV and a tag: it was altered.`,
      );
    const decipher = createDecipheriv(ALGORITHM, key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new CodecError(
        `Cannot decrypt a payload with key id '${keyId}': authentication failed. Either the key given for ` +
          `'${keyId}' is not the one it was encrypted with, or the payload was altered.`,
      );
    }
    const decoded = temporal.api.common.v1.Payload.decode(plain);
    // protobufjs hands out Buffers over the decrypted bytes: plain copies, as the SDK makes them.
    return {
      metadata: Object.fromEntries(Object.entries(decoded.metadata).map(([k, v]) => [k, new Uint8Array(v)])),
      data: new Uint8Array(decoded.data),
    };
  }
}
