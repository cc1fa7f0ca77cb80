/**
 * The board's gate before every route (the Hono app itself, no Temporal behind it: a refused request never
 * reaches one): the API reads and answers only with the token (the event stream with `?token=`), nothing but
 * a read from another site (Origin, Sec-Fetch-Site), bodies only as JSON. The page and its files stay public.
 */
import type { Client } from '@temporalio/client';
import { boardHosts, boardOrigins } from '../../../../src/client/board/auth';
import { boardApp, type BoardContext } from '../../../../src/client/board/routes';
import type { BoardWatcher } from '../../../../src/client/board/watcher';

const TOKEN = 'board-gate-token-0123456789';
const PORT = 8234;
const hosts = boardHosts('127.0.0.1', PORT);
const reads: string[] = [];
const ctx: BoardContext = {
  client: {} as Client,
  watcher: { refresh: () => undefined } as unknown as BoardWatcher,
  token: TOKEN,
  user: 'test',
  ui: { uiBaseUrl: null, namespace: 'default' },
  hosts,
  origins: boardOrigins(hosts),
  listSagas: async () => {
    reads.push('list');
    return { sagas: [] };
  },
  readSaga: async () => {
    throw new Error('not reached');
  },
};
const app = boardApp(ctx, () => undefined);
const request = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  app.request(`http://127.0.0.1:${PORT}${path}`, {
    ...init,
    headers: { host: `127.0.0.1:${PORT}`, ...init.headers },
  });
const auth = { authorization: `Bearer ${TOKEN}` };

beforeEach(() => (reads.length = 0));

test('a read without the token, or with a wrong one, is refused before it reads', async () => {
  expect((await request('/api/sagas')).status).toBe(401);
  expect((await request('/api/sagas', { headers: { authorization: 'Bearer nope-nope-nope' } })).status).toBe(
    401,
  );
  expect((await request('/api/events?token=nope-nope-nope')).status).toBe(401);
  expect(reads).toEqual([]);
  const ok = await request('/api/sagas', { headers: auth });
  expect({ status: ok.status, reads }).toEqual({ status: 200, reads: ['list'] });
});

test('the token in the query counts for the event stream only', async () => {
  expect((await request(`/api/sagas?token=${TOKEN}`)).status).toBe(401);
});

test('a cross-site request is refused even with the token: Origin or fetch metadata', async () => {
  for (const headers of [
    { ...auth, origin: 'http://evil.example' },
    { ...auth, 'sec-fetch-site': 'cross-site' },
    { ...auth, 'sec-fetch-site': 'same-site' }, // another port of 127.0.0.1, e.g. the Web UI's page
  ])
    expect({ headers, status: (await request('/api/sagas', { headers })).status }).toEqual({
      headers,
      status: 403,
    });
  expect(reads).toEqual([]);
  // The board's own page: same origin.
  const own = { ...auth, origin: `http://127.0.0.1:${PORT}`, 'sec-fetch-site': 'same-origin' };
  expect((await request('/api/sagas', { headers: own })).status).toBe(200);
});

test("a cross-site text/plain POST (a page's drive-by) is refused, on any path", async () => {
  for (const path of ['/api/sagas/demo/respond', '/', '/index.html', '/api/anything'])
    expect({
      path,
      status: (
        await request(path, {
          method: 'POST',
          headers: { origin: 'http://evil.example', 'content-type': 'text/plain' },
          body: '{"interactionId":"confirm-name","choice":"confirm"}',
        })
      ).status,
    }).toEqual({ path, status: 403 });
});

test('a body that is not JSON is refused, even same-origin with the token', async () => {
  const res = await request('/api/sagas/demo/respond', {
    method: 'POST',
    headers: { ...auth, origin: `http://127.0.0.1:${PORT}`, 'content-type': 'text/plain' },
    body: '{"interactionId":"confirm-name","choice":"confirm"}',
  });
  expect(res.status).toBe(415);
});

test('the page and its files need no token (they hold no data); a cross-site link to the page opens it', async () => {
  for (const headers of [{}, { 'sec-fetch-site': 'cross-site' }] as Record<string, string>[])
    expect((await request('/', { headers })).status).toBe(200);
});
