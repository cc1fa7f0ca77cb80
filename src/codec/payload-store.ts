/**
 * Large payloads go to a content-addressed store on disk and travel as a reference (the "claim check"
 * pattern Temporal recommends for payloads near its limits): Temporal refuses a payload over 2 MB and the
 * SDK warns from 512 KB, and a saga's plan is what its user wrote, of any size. Payloads up to the
 * threshold pass through untouched, so small sagas read on any host as before. Every process that reads a
 * stored payload (the workers, the CLI, the board) must see the same store: one host's saga home by default,
 * a shared folder (SAGA_PAYLOAD_DIR) when workers run on several hosts.
 *
 * Runs after the encryption codec: with a key set, the store holds only ciphertext.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CodecError, METADATA_ENCODING_KEY, text, utf8 } from './encryption-codec';

export const STORED_ENCODING = 'binary/saga-stored';
export const METADATA_STORED_SHA256 = 'stored-sha256';
export const METADATA_STORED_BYTES = 'stored-bytes';

/** Payloads over this many bytes are stored by default: half the SDK's 512 KB warning. */
export const DEFAULT_STORE_OVER_BYTES = 256 * 1024;

export const isStored = (payload: Payload): boolean =>
  text(payload.metadata?.[METADATA_ENCODING_KEY]) === STORED_ENCODING;

/** A payload's size as it travels: its data and its metadata's keys and values. */
export function payloadBytes(payload: Payload): number {
  let bytes = payload.data?.length ?? 0;
  for (const [key, value] of Object.entries(payload.metadata ?? {}))
    bytes += key.length + (value?.length ?? 0);
  return bytes;
}

export class PayloadStoreCodec implements PayloadCodec {
  constructor(private readonly config: { dir: string; overBytes: number }) {}

  get dir(): string {
    return this.config.dir;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(
      payloads.map((p) => (payloadBytes(p) > this.config.overBytes ? this.store(p) : Promise.resolve(p))),
    );
  }

  /** Payloads that were not stored pass through. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((p) => (isStored(p) ? this.load(p) : Promise.resolve(p))));
  }

  /** `<dir>/<first two hex digits>/<sha256>`: content-addressed, so a payload stored twice is one file. */
  fileOf(sha256: string): string {
    return path.join(this.config.dir, sha256.slice(0, 2), sha256);
  }

  private async store(payload: Payload): Promise<Payload> {
    const bytes = temporal.api.common.v1.Payload.encode(payload).finish();
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const file = this.fileOf(sha256);
    if (!(await fs.stat(file).catch(() => null))) {
      await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      await fs.writeFile(tmp, bytes, { mode: 0o600 });
      await fs.rename(tmp, file);
    }
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: utf8(STORED_ENCODING),
        [METADATA_STORED_SHA256]: utf8(sha256),
        [METADATA_STORED_BYTES]: utf8(String(bytes.length)),
      },
      data: new Uint8Array(),
    };
  }

  private async load(payload: Payload): Promise<Payload> {
    const sha256 = text(payload.metadata?.[METADATA_STORED_SHA256]) ?? '';
    if (!/^[0-9a-f]{64}$/.test(sha256))
      throw new CodecError(`A stored payload's reference has no valid '${METADATA_STORED_SHA256}'.`);
    const file = this.fileOf(sha256);
    const bytes = await fs.readFile(file).catch((error: NodeJS.ErrnoException) => {
      throw new CodecError(
        `A payload of ${text(payload.metadata?.[METADATA_STORED_BYTES]) ?? '?'} bytes is in the payload store as ` +
          `${file}, which this process cannot read (${error.code ?? error.message}). Set SAGA_PAYLOAD_DIR to ` +
          'the store the workers write (a folder every host of the namespace shares).',
      );
    });
    if (createHash('sha256').update(bytes).digest('hex') !== sha256)
      throw new CodecError(`The stored payload ${file} does not match its hash: it was altered.`);
    const decoded = temporal.api.common.v1.Payload.decode(bytes);
    return {
      metadata: Object.fromEntries(Object.entries(decoded.metadata).map(([k, v]) => [k, new Uint8Array(v)])),
      data: new Uint8Array(decoded.data),
    };
  }
}
