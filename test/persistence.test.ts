/**
 * Durability: a saga waiting for input survives a full stop/start of the dev server on the same SQLite
 * file and completes afterwards. Uses its own server so the shared one keeps serving other test files.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { prepareSaga, startSaga } from '../src/client/commands/start';
import { respond } from '../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../src/demo/sample-repo';
import { sagaWorkflowId } from '../src/domain/naming';
import type { SagaStatus } from '../src/domain/state';
import { statusQuery } from '../src/workflows/definitions';
import { freePort, startDevServer, type DevServer } from '../src/worker/dev-server';
import { createSagaWorkers } from '../src/worker/worker';
import { quietRuntime } from './harness/saga-env';
import { WORKFLOW_BUNDLE } from './harness/server';

jest.setTimeout(240_000);
quietRuntime();

describe('persistence across a server restart', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-persist-'));
  const dbFile = path.join(root, 'temporal.db');
  let server: DevServer | undefined;
  let port: number;

  async function up() {
    server = await startDevServer({
      dbFile,
      port,
      headless: true,
      logFile: path.join(root, 'server.log'),
      startTimeoutMs: 120_000,
    });
    const connection = await Connection.connect({ address: server.address });
    const native = await NativeConnection.connect({ address: server.address });
    const workers = await createSagaWorkers({
      connection: native,
      namespace: 'default',
      sagaHome: path.join(root, 'home'),
      hostId: 'persist',
      taskQueue: 'saga-persist',
      workflowBundlePath: WORKFLOW_BUNDLE,
    });
    const runs = workers.map((w: Worker) => w.run());
    const down = async () => {
      workers.forEach((w) => w.shutdown());
      await Promise.allSettled(runs);
      await native.close();
      await connection.close();
      await server!.stop();
    };
    return { client: new Client({ connection }), down };
  }

  const waitFor = async (client: Client, pred: (s: SagaStatus) => boolean) => {
    for (let i = 0; i < 300; i++) {
      const s = await client.workflow
        .getHandle(sagaWorkflowId('persist'))
        .query(statusQuery)
        .catch(() => null);
      if (s && pred(s)) return s;
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error('saga did not reach the expected state');
  };

  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a waiting saga survives the server stopping and completes after the restart', async () => {
    port = await freePort();
    Object.assign(process.env, {
      SAGA_HOME: path.join(root, 'home'),
      SAGA_HOST_ID: 'persist',
      SAGA_TASK_QUEUE: 'saga-persist',
    });
    const repo = createSampleRepo(path.join(root, 'repo'));
    let session = await up();
    const input = await prepareSaga({
      repo,
      argumentsText: 'Add a greeting',
      plan: GREETING_PLAN_FILE,
      name: 'persist',
    });
    await startSaga(session.client, input);
    await waitFor(session.client, (s) => s.pending.some((p) => p.id === 'confirm-name'));
    await session.down();

    // Same database file, new server process: the saga is still there, still waiting.
    session = await up();
    const after = await waitFor(session.client, (s) => s.pending.some((p) => p.id === 'confirm-name'));
    expect(after.phase).toBe('planning');
    for (const [id, choice] of [
      ['confirm-name', 'confirm'],
      ['plan-approval-1', 'approve'],
      ['acceptance-1', 'accept'],
    ] as const) {
      await waitFor(session.client, (s) => s.pending.some((p) => p.id === id));
      await respond(session.client, 'persist', { interactionId: id, choice, user: 'test' });
    }
    const result = await session.client.workflow.getHandle(sagaWorkflowId('persist')).result();
    expect(result.phase).toBe('complete');
    await session.down();
    server = undefined;
  });
});
