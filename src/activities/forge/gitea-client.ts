/**
 * One call to Gitea's `/api/v1`: the token read from the environment at the moment of the call and sent
 * only in the Authorization header, a timeout on every call, the answer parsed with a zod schema, and a
 * failure turned into a ForgeCallError naming the call, the HTTP status and Gitea's own message (with the
 * token scrubbed, should a forge ever echo it).
 */
import type { z } from 'zod';
import { ForgeCallError, scrubSecret } from './forge-error';
import { GiteaErrorSchema } from './gitea-schemas';
import type { ForgeTarget } from './port';
import { retryAfterMs } from './retry-after';

export { ForgeCallError, scrubSecret } from './forge-error';

export const DEFAULT_FORGE_TIMEOUT_MS = 30_000;
const MESSAGE_LIMIT = 500;

/** The token, read now from the variable `target.tokenEnv` names; an error names the variable only. */
export function readToken(target: ForgeTarget, env: NodeJS.ProcessEnv): string {
  const token = env[target.tokenEnv];
  if (!token || token.trim() === '') {
    throw new ForgeCallError(
      'token',
      null,
      `the forge token is missing: set the environment variable ${target.tokenEnv} (forge.token_env) for the worker`,
    );
  }
  return token.trim();
}

export interface GiteaRequest<T> {
  /** Names the call in errors, e.g. `create pull request`. */
  call: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Below `/api/v1`, with its query; every variable part already encoded by the caller. */
  path: string;
  body?: unknown;
  schema: z.ZodType<T>;
  /** Sent as If-None-Match; a 304 answer is returned as `not-modified`. */
  etag?: string | null;
  /** Statuses returned as `{ status, message }` instead of thrown (e.g. a merge Gitea refuses). */
  acceptStatuses?: number[];
}

export type GiteaAnswer<T> =
  | { kind: 'ok'; data: T; etag: string | null; status: number }
  | { kind: 'not-modified' }
  | { kind: 'refused'; status: number; message: string };

/** Gitea's message from an error body: its JSON `message`, else the text's start. */
function forgeMessage(text: string): string {
  try {
    const parsed = GiteaErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.message.trim() !== '') return parsed.data.message.trim();
  } catch {
    // Not JSON: the text itself.
  }
  const trimmed = text.trim();
  return trimmed === '' ? '(no message)' : trimmed.slice(0, MESSAGE_LIMIT);
}

export class GiteaClient {
  private readonly apiBase: string;

  constructor(
    readonly target: ForgeTarget,
    private readonly env: NodeJS.ProcessEnv,
    private readonly timeoutMs: number = DEFAULT_FORGE_TIMEOUT_MS,
    /** Awaited before each HTTP call (a tracker's call budget). */
    private readonly beforeCall: () => Promise<void> = async () => {},
  ) {
    this.apiBase = `${target.url.replace(/\/+$/, '')}/api/v1`;
  }

  /** `/repos/OWNER/REPO` with both parts encoded, for the caller to extend. */
  repoPath(): string {
    return `/repos/${encodeURIComponent(this.target.owner)}/${encodeURIComponent(this.target.repo)}`;
  }

  async request<T>(request: GiteaRequest<T>): Promise<GiteaAnswer<T>> {
    const token = readToken(this.target, this.env);
    const where = `${request.method} ${request.path.split('?')[0]}`;
    const fail = (status: number | null, detail: string, waitMs: number | null = null): never => {
      const statusText = status === null ? 'no answer' : `HTTP ${status}`;
      throw new ForgeCallError(
        request.call,
        status,
        scrubSecret(`Gitea call '${request.call}' (${where}) failed: ${statusText}: ${detail}`, token),
        waitMs,
      );
    };
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: `token ${token}`,
    };
    if (request.body !== undefined) headers['Content-Type'] = 'application/json';
    if (request.etag) headers['If-None-Match'] = request.etag;
    let response: Response;
    await this.beforeCall();
    try {
      response = await fetch(`${this.apiBase}${request.path}`, {
        method: request.method,
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const reason =
        (error as { name?: unknown } | null)?.name === 'TimeoutError'
          ? `timed out after ${this.timeoutMs} ms`
          : describe(error);
      return fail(null, reason);
    }
    if (response.status === 304 && request.etag) return { kind: 'not-modified' };
    const text = await response.text().catch((error: unknown) => fail(response.status, describe(error)));
    if (!response.ok) {
      if (request.acceptStatuses?.includes(response.status)) {
        return { kind: 'refused', status: response.status, message: scrubSecret(forgeMessage(text), token) };
      }
      return fail(response.status, forgeMessage(text), retryAfterMs(response.headers));
    }
    let json: unknown;
    try {
      json = text.trim() === '' ? null : JSON.parse(text);
    } catch {
      return fail(response.status, `the answer is not JSON: ${text.slice(0, 200)}`);
    }
    const parsed = request.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return fail(
        response.status,
        `unexpected answer: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      );
    }
    return { kind: 'ok', data: parsed.data, etag: response.headers.get('etag'), status: response.status };
  }

  /** A call that must succeed: its data. */
  async call<T>(request: Omit<GiteaRequest<T>, 'etag' | 'acceptStatuses'>): Promise<T> {
    const answer = await this.request(request);
    if (answer.kind !== 'ok')
      throw new ForgeCallError(request.call, null, `Gitea call '${request.call}' gave no data`);
    return answer.data;
  }

  /** Every page of a list (`limit` per page, Gitea's default maximum is 50), up to `maxPages`. */
  async list<T>(
    request: Omit<GiteaRequest<T[]>, 'etag' | 'acceptStatuses' | 'method'>,
    maxPages = 20,
  ): Promise<T[]> {
    const all: T[] = [];
    const limit = 50;
    const joiner = request.path.includes('?') ? '&' : '?';
    for (let page = 1; page <= maxPages; page++) {
      const items = await this.call({
        ...request,
        method: 'GET',
        path: `${request.path}${joiner}limit=${limit}&page=${page}`,
      });
      all.push(...items);
      if (items.length < limit) break;
    }
    return all;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
