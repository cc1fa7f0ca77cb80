/**
 * The saga board's API (README "The saga board") over real HTTP against the real Temporal server and a
 * real saga: the list and live events show what it waits for; answers are refused without the token, with a
 * wrong choice (the Update's own error) or from another site, and change nothing; a good answer moves the
 * saga on; ten open pages cost Temporal no more queries than one; agent-written text stays a JSON string.
 */
import http from 'node:http';
import path from 'node:path';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { applyDelta, type DeltaOp } from '../../../../src/client/board/delta';
import { startBoardServer, type BoardServer } from '../../../../src/client/board/server';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { getStatus } from '../../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { cancelSagaQuietly } from '../../../harness/greeting-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';
import { saveEnv } from '../../../harness/process-env';
import { startBoardProcess } from '../../../harness/board-process';
import { openEvents, type EventStream } from '../../../harness/sse-client';

const TOKEN = 'board-test-token-0123456789';
const GOAL = 'Add a greeting <script>alert("x")</script>';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('saga board API', () => {
  let env: SagaTestEnv;
  let board: BoardServer;
  let client: Client;
  let restoreEnv: () => void = () => undefined;
  const name = `board-${Date.now().toString(36)}`;
  const orphan = `${name}-orphan`;
  /** Queries and descriptions of this saga's workflow made through the board's client: the real cost. */
  let calls = 0;
  /** Status queries of the orphaned saga (below) made through the board's client. */
  let orphanQueries = 0;
  const streams: EventStream[] = [];

  beforeAll(async () => {
    env = await createSagaTestEnv('boardapi');
    restoreEnv = saveEnv(['SAGA_HOME', 'SAGA_HOST_ID', 'SAGA_TASK_QUEUE']);
    Object.assign(process.env, {
      SAGA_HOME: env.sagaHome,
      SAGA_HOST_ID: env.hostId,
      SAGA_TASK_QUEUE: env.taskQueue,
    });
    await env.startWorkers();
    const counting: WorkflowClientInterceptor = {
      query: (input, next) => {
        if (input.workflowExecution.workflowId === sagaWorkflowId(name)) calls++;
        if (input.workflowExecution.workflowId === sagaWorkflowId(orphan)) orphanQueries++;
        return next(input);
      },
      describe: (input, next) => {
        if (input.workflowExecution.workflowId === sagaWorkflowId(name)) calls++;
        return next(input);
      },
    };
    client = new Client({
      connection: env.client.connection,
      namespace: env.client.options.namespace,
      interceptors: { workflow: [counting] },
    });
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const input = await prepareSaga({ repo, argumentsText: GOAL, plan: GREETING_PLAN_FILE, name });
    await startSaga(env.client, input);
    await waitForPending(env, name, 'confirm-name');
    // A saga no worker polls for (its host is gone): its status query never answers. It must not hold up the
    // list or another saga's page.
    process.env.SAGA_TASK_QUEUE = `${env.taskQueue}-nobody`;
    const orphanInput = await prepareSaga({
      repo,
      argumentsText: 'Orphaned',
      plan: GREETING_PLAN_FILE,
      name: orphan,
    });
    await startSaga(env.client, orphanInput);
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    board = await startBoardServer({
      client,
      token: TOKEN,
      user: 'tester',
      ui: { uiBaseUrl: 'http://127.0.0.1:8233', namespace: client.options.namespace },
      port: 0,
      pollMs: 250,
    });
  });

  afterAll(async () => {
    for (const s of streams) s.close();
    await cancelSagaQuietly(env, name);
    await env.client.workflow
      .getHandle(sagaWorkflowId(orphan))
      .terminate('test over')
      .catch(() => undefined);
    await board?.close();
    await env?.close();
    restoreEnv();
  });

  /** A read as the page makes it: with the token. */
  const api = (p: string) => fetch(`${board.url}${p}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const answer = (body: unknown, headers: Record<string, string>) =>
    fetch(`${board.url}/api/sagas/${name}/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const pendingIds = async () => (await getStatus(env.client, name)).pending.map((p) => p.id);
  const page = () => ({ origin: board.url, authorization: `Bearer ${TOKEN}` });

  it('lists the saga, waiting, with its goal as plain text', async () => {
    const res = await api('/api/sagas');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const { sagas } = (await res.json()) as { sagas: Array<Record<string, unknown>> };
    const mine = sagas.find((s) => s.name === name);
    expect(mine).toMatchObject({ name, running: true, goal: GOAL, budgetUsd: null });
    expect(mine!.waiting).toBeGreaterThan(0);
  });

  it('serves one saga as `saga status --json` shows it, with Web UI links in its namespace', async () => {
    const view = (await (await api(`/api/sagas/${name}`)).json()) as {
      status: { name: string; pending: Array<{ id: string; prompt: string }>; costUsd: number };
      links: { saga: string; list: string };
    };
    expect(view.status.name).toBe(name);
    expect(view.status.costUsd).toBe(0);
    // Agent- and user-written text comes back as a JSON string, never as markup to render.
    expect(view.status.pending[0]!.prompt).toContain('<script>alert("x")</script>');
    expect(view.links.saga).toBe(
      `http://127.0.0.1:8233/namespaces/${client.options.namespace}/workflows/${sagaWorkflowId(name)}`,
    );
    expect((await api('/api/sagas/Not_A_Name')).status).toBe(400);
    expect((await api('/api/sagas/no-such-saga-here')).status).toBe(404);
  });

  it('sends the status with the confirm-name pending as a server-sent event at once', async () => {
    const events = openEvents(`${board.url}/api/events?saga=${name}&token=${TOKEN}`);
    streams.push(events);
    const status = await events.waitFor((e) => e.event === 'status');
    expect(JSON.parse(status.data).status.pending.map((p: { id: string }) => p.id)).toEqual(['confirm-name']);
    await events.waitFor((e) => e.event === 'sagas' && e.data.includes(name));
  });

  it('lists a saga no worker answers for, from its search attributes, without holding up the list', async () => {
    const started = Date.now();
    const { sagas } = (await (await api('/api/sagas')).json()) as { sagas: Array<Record<string, unknown>> };
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(sagas.find((s) => s.name === orphan)).toMatchObject({
      running: true,
      phase: 'planning',
      total: 0,
    });
    expect(sagas.find((s) => s.name === name)).toMatchObject({ running: true });
    // Once it has missed twice running it is not asked again at each read (each ask costs the list 2 s)
    // until its search attributes change or 30 s pass.
    await api('/api/sagas');
    const asked = orphanQueries;
    expect(asked).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < 3; i++) {
      const again = (await (await api('/api/sagas')).json()) as { sagas: Array<Record<string, unknown>> };
      expect(again.sagas.find((s) => s.name === orphan)).toMatchObject({ running: true, phase: 'planning' });
    }
    expect(orphanQueries).toBe(asked);
    // Its own page says why it shows nothing, after the view's time limit.
    const view = await api(`/api/sagas/${orphan}`);
    expect(((await view.json()) as { error: string }).error).toBe(
      `Saga '${orphan}' did not answer within 10 s: is a worker for it running?`,
    );
  });

  it('refuses an answer without the token, and changes nothing', async () => {
    const res = await answer({ interactionId: 'confirm-name', choice: 'confirm' }, { origin: board.url });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/token/) });
    const wrong = await answer(
      { interactionId: 'confirm-name', choice: 'confirm' },
      { origin: board.url, authorization: 'Bearer not-the-token' },
    );
    expect(wrong.status).toBe(401);
    expect(await pendingIds()).toEqual(['confirm-name']);
  });

  it("refuses a wrong choice with the Update's error, and changes nothing", async () => {
    const res = await answer({ interactionId: 'confirm-name', choice: 'maybe-later' }, page());
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toMatch(/maybe-later/);
    const bad = await answer({ interactionId: 'confirm-name' }, page());
    expect(bad.status).toBe(400);
    expect((await answer({ interactionId: 'nope', choice: 'confirm' }, page())).status).toBe(404);
    expect(await pendingIds()).toEqual(['confirm-name']);
  });

  it('refuses a cross-site request (Origin, fetch metadata, Host), and changes nothing', async () => {
    const body = { interactionId: 'confirm-name', choice: 'confirm' };
    const res = await answer(body, { ...page(), origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect((await answer(body, { ...page(), 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await rawStatus(board.port, '/api/sagas', 'evil.example')).toBe(403);
    expect(await pendingIds()).toEqual(['confirm-name']);
  });

  it('costs Temporal no more queries with ten open pages than with one', async () => {
    const measure = async (pages: number) => {
      const opened = Array.from({ length: pages }, () =>
        openEvents(`${board.url}/api/events?saga=${name}&token=${TOKEN}`),
      );
      await Promise.all(opened.map((e) => e.waitFor((x) => x.event === 'status')));
      const before = calls;
      await sleep(2_000);
      const made = calls - before;
      for (const e of opened) e.close();
      return made;
    };
    const one = await measure(1);
    const ten = await measure(10);
    // Closed pages unsubscribe: only the first test's page (the list and its saga) is still listening.
    for (let i = 0; i < 50 && board.watcher.listeners() > 2; i++) await sleep(100);
    expect(board.watcher.listeners()).toBe(2);
    expect(one).toBeGreaterThan(0);
    // The windows need not hold the same number of polls (one more is +1/7 or so); a poll per page would be 10x.
    expect(ten).toBeLessThanOrEqual(one * 1.5);
  });

  it('takes a good answer with the token: 200, the saga moves on, seen live and in its status', async () => {
    const events = streams[0]!;
    const res = await answer({ interactionId: 'confirm-name', choice: 'confirm' }, page());
    expect(res.status).toBe(200);
    const { answer: recorded } = (await res.json()) as { answer: { choice: string; user: string } };
    expect(recorded).toMatchObject({ choice: 'confirm', user: 'board:tester' });
    // The saga's view as the page has it: the first event whole, then deltas applied.
    const view = () => {
      let v: { status: { pending: { id: string }[] } } | undefined;
      for (const e of events.events)
        if (e.event === 'status') v = JSON.parse(e.data) as typeof v;
        else if (e.event === 'status-delta' && v)
          v = applyDelta(v, (JSON.parse(e.data) as { ops: DeltaOp[] }).ops);
      return v;
    };
    await events.waitFor(
      (e) => e.event.startsWith('status') && !view()!.status.pending.some((p) => p.id === 'confirm-name'),
    );
    expect(await pendingIds()).not.toContain('confirm-name');
    expect((await answer({ interactionId: 'confirm-name', choice: 'confirm' }, page())).status).toBe(409);
  });

  it("reads a task's files by its ref, and the report (null before the saga is done)", async () => {
    expect(await (await api(`/api/sagas/${name}/report`)).json()).toEqual({ markdown: null });
    expect((await api(`/api/sagas/${name}/tasks/x.y/transcript`)).status).toBe(400);
    expect((await api(`/api/sagas/${name}/tasks/9.9/transcript?tail=5`)).status).toBe(404);
    expect((await api(`/api/sagas/${name}/tasks/9.9/diff`)).status).toBe(404);
    expect((await api(`/api/sagas/${name}/tasks/1.1/transcript?tail=0`)).status).toBe(400);
  });

  it('serves the page and only allow-listed vendor modules', async () => {
    expect((await api('/')).status).toBe(200);
    const preact = await api('/vendor/preact/dist/preact.mjs');
    expect(preact.status).toBe(200);
    expect(preact.headers.get('content-type')).toMatch(/javascript/);
    for (const p of [
      '/vendor/preact/package.json',
      '/vendor/../package.json',
      '/vendor/%2e%2e/package.json',
      '/.env',
    ])
      expect((await api(p)).status).toBe(404);
  });

  it('runs from the built CLI: bin/saga board serves the list and the vendor modules, stops on SIGINT', async () => {
    const board = await startBoardProcess({ ...env.cliEnv, SAGA_BOARD_TOKEN: TOKEN });
    try {
      const { url } = board;
      expect(board.output()).not.toContain(TOKEN);
      expect((await fetch(`${url}/api/sagas`)).status).toBe(401);
      const { sagas } = (await (
        await fetch(`${url}/api/sagas`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as {
        sagas: Array<{ name: string }>;
      };
      expect(sagas.map((s) => s.name)).toContain(name);
      expect((await fetch(`${url}/vendor/marked/lib/marked.esm.js`)).status).toBe(200);
      expect((await fetch(`${url}/`)).status).toBe(200);
      expect(await board.stop()).toBe(0);
    } finally {
      board.child.kill('SIGKILL');
    }
  });
});

/** A GET with a Host header of our choosing (fetch does not let a caller set it). */
function rawStatus(port: number, p: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}
