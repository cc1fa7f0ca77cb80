/**
 * AES-256-GCM payload codec: on a shared Temporal server whoever can read histories reads every
 * goal, plan and answer; with this codec the server stores only ciphertext. Same wire format as Temporal's
 * encryption sample (metadata `encoding: binary/encrypted` and `encryption-key-id`; data = 12-byte IV,
 * ciphertext, 16-byte tag of the serialized Payload protobuf), so its codec servers and tools interoperate
 * for payloads without a workflow binding (METADATA_BINDING); bound ones need this codec, as the sample's has
 * no additional data.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA_ENCODING_KEY = 'encoding';
export const METADATA_KEY_ID = 'encryption-key-id';
/**
 * What a ciphertext is bound to: a hash of its namespace and workflow id, authenticated as the cipher's
 * additional data, so a ciphertext copied into another workflow's history (or with this entry altered or
 * removed) does not decrypt there. A hash, not the names: the Web UI's codec endpoint decrypts with no
 * context, and the names need not travel in every payload.
 */
export const METADATA_BINDING = 'encryption-binding';
const BINDING_LABEL = 'saga-codec-binding-v1\0';

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

/**
 * The workflow a payload belongs to, from the SDK's serialization context: a workflow's own, or for an
 * activity the workflow that scheduled it. Null when the SDK gives none (or an activity without a workflow).
 */
export function bindingOf(context: SerializationContext | undefined): string | null {
  if (!context?.workflowId) return null;
  return createHash('sha256')
    .update(BINDING_LABEL)
    .update(JSON.stringify([context.namespace, context.workflowId]))
    .digest('hex');
}

const describeContext = (context: SerializationContext | undefined): string =>
  context?.workflowId ? `workflow '${context.workflowId}' of namespace '${context.namespace}'` : '';

export interface CodecOptions {
  /**
   * Refuse payloads that are not encrypted (SAGA_CODEC_ALLOW_PLAINTEXT unset): with a key set, a workflow
   * started or signalled in plaintext by whoever reaches the server does not run.
   */
  requireEncryption?: boolean;
}

export interface CodecKeys {
  /** Id of the key new payloads are encrypted with (stored in each payload's metadata). */
  currentId: string;
  /** Every key this process can decrypt with, by id; includes the current one. */
  keys: ReadonlyMap<string, Buffer>;
}

export class EncryptionCodec implements PayloadCodec {
  private readonly current: Buffer;

  private readonly requireEncryption: boolean;

  constructor(
    private readonly config: CodecKeys,
    options: CodecOptions = {},
  ) {
    this.requireEncryption = options.requireEncryption ?? false;
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

  get requiresEncryption(): boolean {
    return this.requireEncryption;
  }

  /** Bound to the context's workflow when the SDK names one (see METADATA_BINDING). */
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const binding = bindingOf(context);
    return payloads.map((payload) => this.encryptOne(payload, binding));
  }

  /**
   * Payloads that are not encrypted pass through only without `requireEncryption` (histories written before
   * the codec was set). A bound ciphertext decrypts only with its binding intact, and only in its own
   * workflow when the context names one; an unbound one (written before bindings, or without a context)
   * still decrypts anywhere.
   */
  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const expected = bindingOf(context);
    return payloads.map((payload) => {
      if (isEncrypted(payload)) return this.decryptOne(payload, expected, context);
      if (this.requireEncryption)
        throw new CodecError(
          `Refused a payload that is not encrypted${expected ? ` (${describeContext(context)})` : ''}: ` +
            `a codec key is set, so every payload must be encrypted with it. Start and signal sagas through ` +
            `saga (or a client with the same key); to read sagas written before the key was set, set ` +
            `SAGA_CODEC_ALLOW_PLAINTEXT=1.`,
        );
      return payload;
    });
  }

  private encryptOne(payload: Payload, binding: string | null): Payload {
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current, iv);
    if (binding !== null) cipher.setAAD(Buffer.from(BINDING_LABEL + binding, 'utf8'));
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING),
        [METADATA_KEY_ID]: utf8(this.config.currentId),
        ...(binding !== null ? { [METADATA_BINDING]: utf8(binding) } : {}),
      },
      data: new Uint8Array(sealed),
    };
  }

  private decryptOne(
    payload: Payload,
    expected: string | null,
    context: SerializationContext | undefined,
  ): Payload {
    const binding = text(payload.metadata?.[METADATA_BINDING]) ?? null;
    if (binding !== null && expected !== null && binding !== expected)
      throw new CodecError(
        `Refused a payload encrypted for another workflow than ${describeContext(context)}: ` +
          `a ciphertext decrypts only in the workflow it was written for.`,
      );
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
    if (binding !== null) decipher.setAAD(Buffer.from(BINDING_LABEL + binding, 'utf8'));
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
          `'${keyId}' is not the one it was encrypted with, or the payload was altered (its data or the workflow it is bound to).`,
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
