/**
 * The codec endpoint the Temporal Web UI calls to show encrypted payloads as readable text (`saga codec
 * serve`): `POST /decode` and `POST /encode` with `{payloads: [{metadata: {k: base64}, data: base64}]}`.
 * The browser calls it from the UI's page, so it answers CORS for the UI's origins only, refuses other origins
 * and bodies that are not JSON (a cross-site `text/plain` POST needs no preflight). With a `secret` it answers
 * only under `/<secret>/`: the UI takes the endpoint as a URL and cannot send a header of ours, so the secret
 * is the path. Bind it to 127.0.0.1 on the machine of the person looking (the default).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { CodecError } from './encryption-codec';
import { readBody } from '../http/read-body';

/** The UI batches a page's payloads; Temporal caps one payload at 2 MB. */
export const MAX_CODEC_BODY_BYTES = 16 * 1024 * 1024;
export const DEFAULT_UI_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'] as const;
const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';

const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64');
const JsonPayload = z.object({
  metadata: z.record(Base64).nullish(),
  data: Base64.nullish(),
});
const CodecRequest = z.object({ payloads: z.array(JsonPayload) });
type JsonPayload = z.infer<typeof JsonPayload>;

const fromJson = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]),
  ),
  data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')),
});

const toJson = (p: Payload): { metadata: Record<string, string>; data: string } => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

/** `http://localhost:8233` as a browser sends it in `Origin` (no trailing slash, lower-case scheme and host). */
export function normalizeOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new CodecError(`--origin '${origin}' is not a URL; expected e.g. http://localhost:8233.`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash)
    throw new CodecError(
      `--origin '${origin}' is not an origin; expected scheme://host[:port], e.g. http://localhost:8233.`,
    );
  return url.origin;
}

/** The origins a browser sends for the Web UI at `uiUrl`: on a loopback host both names, as users type either. */
export function uiOrigins(uiUrl: string | null): string[] {
  if (!uiUrl) return [...DEFAULT_UI_ORIGINS];
  const url = new URL(uiUrl);
  const port = url.port ? `:${url.port}` : '';
  return ['localhost', '127.0.0.1'].includes(url.hostname)
    ? [`${url.protocol}//localhost${port}`, `${url.protocol}//127.0.0.1${port}`]
    : [url.origin];
}

/** Where `saga codec serve` and `saga dev` take the endpoint's secret from (else a random one). */
export const CODEC_SECRET_ENV = 'SAGA_CODEC_ENDPOINT_TOKEN';

/** The secret from `file`, else SAGA_CODEC_ENDPOINT_TOKEN, else a random one. */
export function codecSecretFrom(file: string | undefined, env = process.env): string {
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new CodecError(`--token-file ${file}: cannot read it (${(error as Error).message}).`);
    }
    return checkCodecSecret(text, `--token-file ${file}`);
  }
  const given = env[CODEC_SECRET_ENV];
  return given && given.trim() ? checkCodecSecret(given, CODEC_SECRET_ENV) : newCodecSecret();
}

/** A fresh endpoint secret: URL-safe, as it becomes the endpoint's path. */
export const newCodecSecret = (): string => randomBytes(24).toString('base64url');

/** A secret as a path segment: URL-safe characters only, long enough not to be guessed. */
export function checkCodecSecret(secret: string, from: string): string {
  const trimmed = secret.trim();
  if (!/^[A-Za-z0-9_-]{16,200}$/.test(trimmed))
    throw new CodecError(
      `${from}: the codec endpoint's secret needs 16 to 200 letters, digits, '-' or '_' (it becomes the URL path).`,
    );
  return trimmed;
}

export interface CodecServer {
  port: number;
  /** Where the UI calls it: with a secret, `http://host:port/<secret>`. */
  url: string;
  close(): Promise<void>;
}

export interface CodecServerOptions {
  codec: PayloadCodec;
  port?: number;
  host?: string;
  /** Web UI origins allowed to call from a browser. */
  origins?: readonly string[];
  /** Answer only under `/<secret>/` (url then ends with it). */
  secret?: string;
  log?: (line: string) => void;
}

export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const origins = new Set((options.origins ?? DEFAULT_UI_ORIGINS).map(normalizeOrigin));
  const log = options.log ?? (() => undefined);
  const secret = options.secret === undefined ? null : checkCodecSecret(options.secret, 'codec endpoint');
  const server = http.createServer({ requestTimeout: 30_000 }, (req, res) =>
    handleRequest(req, res, { codec: options.codec, origins, log, secret }),
  );
  const [host, port] = [options.host ?? '127.0.0.1', options.port ?? 0];
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(new CodecError(`The codec endpoint cannot listen on ${host}:${port}: ${error.message}.`)),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const bound = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    port: address.port,
    url: `http://${bound}:${address.port}${secret ? `/${secret}` : ''}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Handler {
  codec: PayloadCodec;
  origins: Set<string>;
  log: (line: string) => void;
  secret: string | null;
}

/** The path below `/<secret>` (compared in constant time), or null when the secret is missing or wrong. */
function belowSecret(path: string, secret: string | null): string | null {
  if (secret === null) return path;
  const slash = path.indexOf('/', 1);
  if (slash < 0) return null;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(path.slice(1, slash)), digest(secret)) ? path.slice(slash) : null;
}

/** CORS for an allowed Web UI origin; `vary` either way, as the answer depends on the origin. */
function corsHeaders(origin: string | undefined, origins: Set<string>): Record<string, string> {
  return origin && origins.has(origin)
    ? { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' }
    : { vary: 'Origin' };
}

function handleRequest(req: http.IncomingMessage, res: http.ServerResponse, handler: Handler): void {
  const { origins, log } = handler;
  const fullPath = (req.url ?? '/').split('?')[0]!;
  const inner = belowSecret(fullPath, handler.secret);
  // The log and answers never show the secret.
  const path = handler.secret === null ? fullPath : inner === null ? '/…' : `/<secret>${inner}`;
  const origin = req.headers.origin;
  const cors = corsHeaders(origin, origins);
  const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
    res
      .writeHead(status, { 'content-type': 'application/json', ...cors, ...extra })
      .end(body === undefined ? undefined : JSON.stringify(body));
    // One line per request, never bodies: they are what the codec protects.
    log(`${req.method} ${path} → ${status}`);
  };
  // A page of another origin must not use the user's browser to decrypt (CORS alone hides only the answer).
  if (origin && !origins.has(origin))
    return send(403, {
      error: `Origin ${origin} is not allowed; start the server with --origin ${origin}.`,
    });
  if (inner === null) return send(404, { error: 'No endpoint here: the URL lacks the endpoint secret.' });
  const operation = inner === '/decode' ? 'decode' : inner === '/encode' ? 'encode' : null;
  if (!operation) return send(404, { error: `No endpoint ${path} here; use POST /decode or POST /encode.` });
  if (req.method === 'OPTIONS')
    return send(204, undefined, {
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': ALLOWED_HEADERS,
      'access-control-max-age': '600',
    });
  if (req.method !== 'POST') return send(405, { error: 'Use POST.' }, { allow: 'POST, OPTIONS' });
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
    return send(415, { error: 'Send the payloads as Content-Type: application/json.' });
  readBody(req, MAX_CODEC_BODY_BYTES)
    .then(
      async (body) => {
        const reply = await codecReply(body, operation, handler.codec);
        if (reply.problem) log(`${req.method} ${path}: ${reply.problem}`);
        send(reply.status, reply.body, reply.headers);
      },
      () => req.destroy(),
    )
    .catch((error: unknown) => {
      log(`${req.method} ${path}: ${(error as Error).message}`);
      if (!res.headersSent) send(500, { error: 'Internal error.' });
    });
}

/** The answer to a POST body: the payloads decoded or encoded, or why not (`problem`: the codec's refusal). */
async function codecReply(
  body: string | null,
  operation: 'decode' | 'encode',
  codec: PayloadCodec,
): Promise<{ status: number; body: unknown; headers?: Record<string, string>; problem?: string }> {
  if (body === null)
    return {
      status: 413,
      body: { error: `Body over ${MAX_CODEC_BODY_BYTES} bytes.` },
      headers: { connection: 'close' },
    };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { status: 400, body: { error: 'The body is not JSON.' } };
  }
  const parsed = CodecRequest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      status: 400,
      body: { error: `Expected {payloads: [{metadata, data}]}: ${issue.path.join('.')}: ${issue.message}.` },
    };
  }
  try {
    const payloads = parsed.data.payloads.map(fromJson);
    const result = await (operation === 'decode' ? codec.decode(payloads) : codec.encode(payloads));
    return { status: 200, body: { payloads: result.map(toJson) } };
  } catch (error) {
    if (!(error instanceof CodecError)) throw error;
    return { status: 400, body: { error: error.message }, problem: error.message };
  }
}
