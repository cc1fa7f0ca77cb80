/**
 * Durability: a saga waiting for input survives a full stop/start of the dev server on the same SQLite
 * file and completes afterwards. Uses its own server so the shared one keeps serving other test files.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond, waitForStatus } from '../../../../src/client/saga-client';
import { createSampleRepo, demoScript, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { freePort, startDevServer, type DevServer } from '../../../../src/worker/dev-server';
import { createSagaWorkers } from '../../../../src/worker/worker';
import { quietRuntime } from '../../../harness/saga-env';
import { WORKFLOW_BUNDLE } from '../../../harness/server';

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

  const waitFor = (client: Client, pred: (s: SagaStatus) => boolean) =>
    waitForStatus(client, 'persist', pred, { timeoutMs: 90_000 });

  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('a saga survives server restarts while waiting and while an agent runs, then completes', async () => {
    port = await freePort();
    Object.assign(process.env, {
      SAGA_HOME: path.join(root, 'home'),
      SAGA_HOST_ID: 'persist',
      SAGA_TASK_QUEUE: 'saga-persist',
    });
    const demoLog = path.join(root, 'demo.jsonl');
    process.env.SAGA_DEMO_LOG = demoLog;
    // Task 2.1 runs long enough for the server to be restarted under it.
    const base = demoScript();
    const tasks = base.tasks as Record<string, { attempts: Record<string, unknown>[] }>;
    tasks['2.1']!.attempts[0]!.sleep_ms = 4000;
    const repo = createSampleRepo(path.join(root, 'repo'), { script: { tasks } });
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
    await respond(session.client, 'persist', {
      interactionId: 'confirm-name',
      choice: 'confirm',
      user: 'test',
    });
    await waitFor(session.client, (s) => s.pending.some((p) => p.id === 'plan-approval-1'));
    await respond(session.client, 'persist', {
      interactionId: 'plan-approval-1',
      choice: 'approve',
      user: 'test',
    });

    // Mid-saga: server and worker go down while task 2.1's agent runs.
    await waitFor(session.client, (s) => s.milestones[1]?.tasks[0]?.status === 'running');
    await session.down();
    session = await up();
    await waitFor(session.client, (s) => s.pending.some((p) => p.id === 'acceptance-1'));
    await respond(session.client, 'persist', {
      interactionId: 'acceptance-1',
      choice: 'accept',
      user: 'test',
    });
    const runs = readFileSync(demoLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string; taskId: string })
      .filter((r) => r.role === 'implementer')
      .map((r) => r.taskId);
    // Finished tasks were not run again; only the interrupted one may have been.
    expect(runs.filter((t) => t === '1.1')).toHaveLength(1);
    expect(runs.filter((t) => t === '1.2')).toHaveLength(1);
    const result = await session.client.workflow.getHandle(sagaWorkflowId('persist')).result();
    expect(result.phase).toBe('complete');
    await session.down();
    server = undefined;
  });
});
