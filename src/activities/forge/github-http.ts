/**
 * GitHub's REST and GraphQL APIs over Node's fetch, for the GitHub forge adapter (github.ts). The token is
 * read from the environment variable the target names at the moment of each call and sent only in the
 * Authorization header; every call has a timeout; every answer used is parsed with a zod schema; a forge
 * error becomes an Error naming the call, the status and GitHub's message, never the token.
 */
import { z } from 'zod';
import { ForgeCallError } from './forge-error';
import type { ForgeTarget } from './port';
import { retryAfterMs } from './retry-after';

export const GITHUB_TIMEOUT_MS = 15_000;
const API_VERSION = '2022-11-28';
const MAX_MESSAGE = 400;

export interface RestRequest<T> {
  /** A short name of the call for errors: `find pull request`. */
  call: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** The path after the API base, already encoded: `/repos/o/r/pulls`. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  schema: z.ZodType<T>;
  /** Sent as If-None-Match; a 304 answer gives `not-modified`. */
  etag?: string | null;
  /** Statuses answered with GitHub's message instead of thrown (merge: 405, 409, 422). */
  tolerate?: number[];
}

export type RestAnswer<T> =
  | { kind: 'ok'; status: number; data: T; etag: string | null }
  | { kind: 'not-modified'; etag: string | null }
  | { kind: 'refused'; status: number; message: string };

const GraphQLAnswerSchema = z.object({
  data: z.unknown().optional(),
  errors: z.array(z.object({ message: z.string() }).passthrough()).optional(),
});

export interface GitHubHttp {
  rest<T>(request: RestRequest<T>): Promise<RestAnswer<T>>;
  graphql<T>(
    call: string,
    query: string,
    variables: Record<string, unknown>,
    schema: z.ZodType<T>,
  ): Promise<T>;
}

/** GitHub's GraphQL endpoint for a REST base: api.github.com/graphql, or HOST/api/graphql on Enterprise. */
export function graphqlUrl(apiBase: string): string {
  const base = apiBase.replace(/\/+$/, '');
  return /\/api\/v3$/.test(base) ? base.replace(/\/api\/v3$/, '/api/graphql') : `${base}/graphql`;
}

/** The message a GitHub error body carries (`message`, and each `errors[].message` or code). */
export function forgeMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; errors?: unknown };
    const parts = [typeof body.message === 'string' ? body.message : ''];
    if (Array.isArray(body.errors)) {
      for (const e of body.errors as Array<Record<string, unknown>>) {
        const m = e?.message ?? e?.code;
        if (typeof m === 'string') parts.push(m);
      }
    }
    const joined = parts.filter(Boolean).join('; ');
    if (joined) return joined.slice(0, MAX_MESSAGE);
  } catch {
    // not JSON: the text itself
  }
  return text.trim().slice(0, MAX_MESSAGE) || '(no message)';
}

/** A message with every occurrence of the token taken out, whatever produced it. */
const scrub = (message: string, token: string | undefined): string =>
  token ? message.split(token).join('[token]') : message;

interface Connection {
  target: ForgeTarget;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  beforeCall: () => Promise<void>;
}

function tokenOf(c: Connection, call: string): string {
  const token = c.env[c.target.tokenEnv];
  if (!token) {
    throw new ForgeCallError(
      'token',
      null,
      `GitHub ${call}: the environment variable ${c.target.tokenEnv} (the token) is not set`,
    );
  }
  return token;
}

/** One HTTP exchange: the token in the Authorization header only, a timeout, no redirects followed. */
async function send(
  c: Connection,
  call: string,
  url: string,
  init: { method: string; body?: unknown; etag?: string | null },
) {
  const timeoutMs = c.timeoutMs;
  const token = tokenOf(c, call);
  await c.beforeCall();
  const headers: Record<string, string> = {
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${token}`,
    'user-agent': 'saga-on-temporal',
    'x-github-api-version': API_VERSION,
  };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.etag) headers['if-none-match'] = init.etag;
  try {
    const response = await fetch(url, {
      method: init.method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error', // a moved repository is an error to fix in the config, not a hop with the token
    });
    return { response, text: await response.text() };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (err as { name?: unknown }).name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : `${String(err)}${cause ? ` (${cause.code ?? cause.message ?? ''})` : ''}`;
    const message = `GitHub ${call} (${init.method} ${new URL(url).pathname}): ${reason}`;
    throw new ForgeCallError(call, null, scrub(message, token));
  }
}

/** `status`: the answer's HTTP status, kept on the error (an answer of the wrong shape is no network fault). */
function parse<T>(call: string, what: string, text: string, schema: z.ZodType<T>, status: number): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ForgeCallError(call, status, `GitHub ${call} (${what}): the answer is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ForgeCallError(
      call,
      status,
      `GitHub ${call} (${what}): unexpected answer at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return parsed.data;
}

export function gitHubHttp(
  target: ForgeTarget,
  env: NodeJS.ProcessEnv,
  timeoutMs = GITHUB_TIMEOUT_MS,
  /** Awaited before each HTTP call (a tracker's call budget). */
  beforeCall: () => Promise<void> = async () => {},
): GitHubHttp {
  const base = target.url.replace(/\/+$/, '');
  const c: Connection = { target, env, timeoutMs, beforeCall };

  return {
    async rest<T>(req: RestRequest<T>): Promise<RestAnswer<T>> {
      const url = new URL(base + req.path);
      for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
      const what = `${req.method} ${url.pathname}`;
      const { response, text } = await send(c, req.call, url.toString(), req);
      const etag = response.headers.get('etag');
      if (response.status === 304) return { kind: 'not-modified', etag };
      if (!response.ok) {
        const message = scrub(forgeMessage(text), env[target.tokenEnv]);
        if (req.tolerate?.includes(response.status))
          return { kind: 'refused', status: response.status, message };
        throw new ForgeCallError(
          req.call,
          response.status,
          `GitHub ${req.call} (${what}) failed: ${response.status} ${message}`,
          retryAfterMs(response.headers),
        );
      }
      return {
        kind: 'ok',
        status: response.status,
        data: parse(req.call, what, text, req.schema, response.status),
        etag,
      };
    },

    async graphql<T>(call: string, query: string, variables: Record<string, unknown>, schema: z.ZodType<T>) {
      const url = graphqlUrl(base);
      const what = `POST ${new URL(url).pathname}`;
      const { response, text } = await send(c, call, url, { method: 'POST', body: { query, variables } });
      if (!response.ok) {
        throw new ForgeCallError(
          call,
          response.status,
          `GitHub ${call} (${what}) failed: ${response.status} ${scrub(forgeMessage(text), env[target.tokenEnv])}`,
          retryAfterMs(response.headers),
        );
      }
      const body = parse(call, what, text, GraphQLAnswerSchema, response.status);
      if (body.errors && body.errors.length > 0) {
        const message = scrub(body.errors.map((e) => e.message).join('; '), env[target.tokenEnv]);
        throw new ForgeCallError(
          call,
          response.status,
          `GitHub ${call} (${what}) failed: ${response.status} ${message.slice(0, MAX_MESSAGE)}`,
        );
      }
      return parse(call, what, JSON.stringify(body.data ?? null), schema, response.status);
    },
  };
}
