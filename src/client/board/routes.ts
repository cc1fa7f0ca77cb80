/**
 * The board's HTTP API (README "The saga board"): reads and answers only with the token and from the board's
 * own origin; answers through the same validated Update as `saga respond`.
 */
import type { Client } from '@temporalio/client';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { assertSagaName } from '../../domain/contract/naming';
import { UserError } from '../errors';
import { getStatus, respond, RespondRefused } from '../saga-client';
import { hostAllowed, originAllowed, queryTokenMatches, tokenMatches } from './auth';
import { publicFile, vendorFile, type StaticFile } from './files';
import { steerRoutes } from './steer-routes';
import { NotFound, reportMarkdown, taskDiff, transcriptTail } from './task-files';
import type { SagaView, UiPlace } from './views';
import { LIST_TOPIC, type BoardEvent, type BoardWatcher } from './watcher';

export interface BoardContext {
  client: Client;
  watcher: BoardWatcher;
  token: string;
  /** Recorded as the answering user: `board:<user>`. */
  user: string;
  ui: UiPlace;
  /** `saga board --repo PATH` (steer-routes.ts): repositories the new-saga form offers. */
  repos?: string[];
  /** The `host:port` names and origins the board answers to (filled in once it listens). */
  hosts: string[];
  origins: string[];
  listSagas(): Promise<unknown>;
  readSaga(name: string): Promise<SagaView>;
}

const MAX_BODY_BYTES = 64 * 1024;
const KEEP_ALIVE_MS = 15_000;
const AnswerBody = z
  .object({
    interactionId: z.string().min(1).max(200),
    choice: z.string().min(1).max(2_000),
    text: z.string().max(20_000).optional(),
  })
  .strict();

/** The refusal types of the respond Update, as HTTP statuses. */
const REFUSAL_STATUS: Record<string, 400 | 404 | 409> = {
  UnknownInteraction: 404,
  AlreadyAnswered: 409,
};

const fail = (c: Context, status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 500, error: string) =>
  c.json({ error }, status);

/** Maps an error to the API's `{ error }` and status; unknown errors are logged, not shown. */
function failWith(c: Context, error: unknown, log: (line: string) => void) {
  if (error instanceof RespondRefused) return fail(c, REFUSAL_STATUS[error.type] ?? 400, error.message);
  if (error instanceof NotFound) return fail(c, 404, error.message);
  if (error instanceof UserError) {
    const status = /^No saga named/.test(error.message)
      ? 404
      : /not running any more/.test(error.message)
        ? 409
        : 400;
    return fail(c, status, error.message);
  }
  log(`board: ${(error as Error).stack ?? String(error)}`);
  return fail(c, 500, 'Internal error; see the board server log.');
}

/** A saga name from the request, checked before it reaches Temporal. */
function sagaName(c: Context, raw = c.req.param('name') ?? ''): string {
  try {
    return assertSagaName(raw);
  } catch (error) {
    throw new UserError((error as Error).message);
  }
}

const sendFile = (c: Context, file: StaticFile | null) =>
  file
    ? c.body(new Uint8Array(file.body), 200, { 'content-type': file.type, 'cache-control': 'no-cache' })
    : fail(c, 404, `No file ${c.req.path} here.`);

/**
 * The page runs only its own scripts and styles and loads nothing from elsewhere: agent text it shows (a
 * prompt, REPORT.md) cannot run script, load a remote image that reports the page was opened, post a form
 * off-site, or frame the page.
 */
export const BOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  // The one event stream a browser's board tabs share runs in a SharedWorker of the board's own origin.
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function boardApp(ctx: BoardContext, log: (line: string) => void): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    // A name the board does not answer to may be a DNS-rebound site reading the API through the browser.
    if (!hostAllowed(ctx.hosts, c.req.header('host'))) return fail(c, 403, 'Unknown Host.');
    const refused = gate(c, ctx);
    if (refused) return refused;
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('content-security-policy', BOARD_CSP);
    c.header('referrer-policy', 'no-referrer');
    c.header('x-frame-options', 'DENY');
  });
  app.onError((error, c) => failWith(c, error, log));
  app.get('/', async (c) => sendFile(c, await publicFile('index.html')));
  app.get('/vendor/*', async (c) => sendFile(c, await vendorFile(c.req.path.slice('/vendor/'.length))));
  app.get('/api/sagas', async (c) => c.json(await ctx.listSagas()));
  app.get('/api/sagas/:name', async (c) => c.json(await ctx.readSaga(sagaName(c))));
  app.get('/api/sagas/:name/tasks/:ref/transcript', async (c) => {
    const tail = Number(c.req.query('tail') ?? 200);
    if (!Number.isInteger(tail) || tail < 1 || tail > 10_000)
      return fail(c, 400, 'tail: a whole number from 1 to 10000.');
    const status = await getStatus(ctx.client, sagaName(c));
    return c.json({ lines: await transcriptTail(status, c.req.param('ref'), tail) });
  });
  app.get('/api/sagas/:name/tasks/:ref/diff', async (c) =>
    c.json({ diff: await taskDiff(await getStatus(ctx.client, sagaName(c)), c.req.param('ref')) }),
  );
  app.get('/api/sagas/:name/report', async (c) =>
    c.json({ markdown: await reportMarkdown(await getStatus(ctx.client, sagaName(c))) }),
  );
  app.get('/api/events', (c) => events(c, ctx));
  app.post(
    '/api/sagas/:name/respond',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => fail(c, 413, `Body over ${MAX_BODY_BYTES} bytes.`),
    }),
    (c) => answer(c, ctx),
  );
  steerRoutes(app, ctx, (c) => sagaName(c)); // start, cancel, the form's options (steer-routes.ts)
  app.get('/:file', async (c) => sendFile(c, await publicFile(c.req.param('file'))));
  app.notFound((c) => fail(c, 404, `No endpoint ${c.req.method} ${c.req.path} here.`));
  return app;
}

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];

/**
 * Every request before its route: the API and anything that is not a read only from the board's own page
 * (Origin, Sec-Fetch-Site), the API only with the token (reads show goals, plans, diffs and transcripts;
 * EventSource cannot send headers, so the event stream takes it as `?token=`), and a body only as JSON (a
 * cross-site `text/plain` form POST needs no preflight). The page and its files are public: they hold no data.
 */
function gate(c: Context, ctx: BoardContext): Response | null {
  const api = c.req.path === '/api' || c.req.path.startsWith('/api/');
  const unsafe = !SAFE_METHODS.includes(c.req.method);
  if ((api || unsafe) && !originAllowed(ctx.origins, c.req.header('origin'), c.req.header('sec-fetch-site')))
    return fail(c, 403, 'Cross-site request refused: use the board page itself.');
  if (
    api &&
    !tokenMatches(ctx.token, c.req.header('authorization')) &&
    !(c.req.path === '/api/events' && queryTokenMatches(ctx.token, c.req.query('token')))
  )
    return fail(
      c,
      401,
      'Missing or wrong token: send Authorization: Bearer <the token `saga board` printed>.',
    );
  if (unsafe && !/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
    return fail(c, 415, 'Send the body as Content-Type: application/json.');
  return null;
}

/** POST respond: origin, token, body, then the Update; a refusal changes nothing. */
async function answer(c: Context, ctx: BoardContext) {
  if (!originAllowed(ctx.origins, c.req.header('origin'), c.req.header('sec-fetch-site')))
    return fail(c, 403, 'Cross-site request refused: answer from the board page itself.');
  if (!tokenMatches(ctx.token, c.req.header('authorization')))
    return fail(
      c,
      401,
      'Missing or wrong token: send Authorization: Bearer <the token `saga board` printed>.',
    );
  if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
    return fail(c, 400, 'Send the answer as Content-Type: application/json.');
  const name = sagaName(c);
  const parsed = AnswerBody.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success)
    return fail(c, 400, 'Body: expected { "interactionId": string, "choice": string, "text"?: string }.');
  const result = await respond(ctx.client, name, { ...parsed.data, user: `board:${ctx.user}` });
  ctx.watcher.refresh();
  return c.json({ answer: result });
}

/** Sagas one event stream may follow (a browser's tabs share one stream: public/events-worker.js). */
const MAX_STREAM_SAGAS = 50;

/**
 * GET /api/events[?saga=NAME...]: the list (and each saga named) as server-sent events, from the shared
 * watcher; one stream serves all of a browser's board tabs, so it may name several sagas.
 */
function events(c: Context, ctx: BoardContext) {
  const sagas = [...new Set(c.req.queries('saga') ?? [])];
  if (sagas.length > MAX_STREAM_SAGAS) throw new UserError(`saga: at most ${MAX_STREAM_SAGAS} per stream.`);
  for (const saga of sagas) sagaName(c, saga);
  return streamSSE(c, async (stream) => {
    const send = (event: BoardEvent) => void stream.writeSSE(event).catch(() => undefined);
    // The sagas first: their reads start before the list's, which then reuses them (server.ts).
    const stops = sagas.map((saga) => ctx.watcher.subscribe(saga, send));
    stops.push(ctx.watcher.subscribe(LIST_TOPIC, send));
    // A comment line now and then keeps proxies and idle timeouts from closing a quiet stream.
    const keepAlive = setInterval(
      () => void stream.write(': keep-alive\n\n').catch(() => undefined),
      KEEP_ALIVE_MS,
    );
    await new Promise<void>((resolve) => stream.onAbort(resolve));
    clearInterval(keepAlive);
    for (const stop of stops) stop();
  });
}
