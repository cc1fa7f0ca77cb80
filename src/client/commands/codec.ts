/**
 * `saga codec serve`: the payload codec's HTTP endpoint for the Temporal Web UI, so a user with the key
 * reads encrypted inputs and results in the UI while the server itself stores only ciphertext.
 */
import { chainedCodec, codecFromEnv, CODEC_ENV, payloadStoreFromEnv } from '../../codec/config';
import { codecSecretFrom, DEFAULT_UI_ORIGINS, normalizeOrigin, startCodecServer } from '../../codec/server';
import { port, str, strs } from '../args';
import type { ParsedArgs } from '../command-decl';
import { UserError } from '../errors';
import type { Io } from '../io';
import { untilStopped } from '../until-stopped';

/** The port Temporal's codec server samples use. */
export const DEFAULT_CODEC_PORT = 8888;

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/** `saga codec serve` (its only subcommand: runCli parsed the line by that declaration). */
export async function codecCommand(args: ParsedArgs, io: Io): Promise<number> {
  const codec = codecFromEnv(process.env, { forViewing: true });
  if (!codec)
    throw new UserError(
      `saga codec serve: no codec key is set. Set ${CODEC_ENV.key} or ${CODEC_ENV.keyFile} to the key the workers use.`,
    );
  const host = str(args, 'host') ?? '127.0.0.1';
  const origins = strs(args, 'origin').map((origin) => {
    try {
      return normalizeOrigin(origin);
    } catch (error) {
      throw new UserError(`saga codec serve: ${(error as Error).message}`);
    }
  });
  const server = await startCodecServer({
    // Stored payloads too (SAGA_PAYLOAD_DIR): the UI shows what the store holds, not its reference.
    codec: chainedCodec([codec, payloadStoreFromEnv()]),
    port: port(args, 'port', 'codec serve', { allowZero: true }) ?? DEFAULT_CODEC_PORT,
    host,
    origins: origins.length ? origins : DEFAULT_UI_ORIGINS,
    secret: codecSecretFrom(str(args, 'token-file')),
    log: (line) => io.out(line),
  });
  io.out(
    `Codec endpoint listening on ${server.url} (key id ${codec.keyId}); Web UI origins allowed: ` +
      `${(origins.length ? origins : DEFAULT_UI_ORIGINS).join(', ')}.\n` +
      `Point the Web UI at it: temporal server start-dev --ui-codec-endpoint ${server.url}, ` +
      "or the UI's codec server setting (Data Encoder).",
  );
  if (!LOOPBACK.includes(host))
    io.err(`saga codec serve: listening on ${host}: whoever reaches it can decrypt payloads.`);
  return untilStopped(io.out, 'codec endpoint', () => server.close());
}
