/**
 * Web UI inspection (README, Scaling out): a dev server WITH its UI, a saga run to acceptance, and headless
 * Chromium (Debian's `chromium`, driven by playwright-core) filtering the workflow list by `SagaName`:
 * the saga and its phase and task child workflows are listed, other sagas are not. A screenshot is kept
 * in .test-artifacts/screenshots/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { chromium, type BrowserContext } from 'playwright-core';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { respond, waitForStatus } from '../../../src/client/saga-client';
import { createSampleRepo } from '../../../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId, taskWorkflowId } from '../../../src/domain/contract/naming';
import type { SagaStatus } from '../../../src/domain/contract/state';
import { startDevServerOnFreePorts, type DevServer } from '../../../src/worker/dev-server';
import { createSagaWorkers } from '../../../src/worker/worker';
import { writeOneTaskPlan } from '../../harness/one-task-plan';
import { ARTIFACTS_ROOT, WORKFLOW_BUNDLE } from '../../harness/server';

const CHROMIUM = process.env.SAGA_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOTS = path.join(ARTIFACTS_ROOT, 'screenshots');

describe('Temporal Web UI', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-webui-'));
  const hostId = `webui-${path.basename(root).slice(-6)}`.toLowerCase();
  const taskQueue = `saga-test-${hostId}`;
  let server: DevServer;
  let native: NativeConnection;
  let connection: Connection;
  let client: Client;
  let workers: Worker[] = [];
  let runs: Promise<void>[] = [];
  let browser: BrowserContext | undefined;

  beforeAll(async () => {
    // Its own server: the run's shared test server is headless.
    server = await startDevServerOnFreePorts({
      dbFile: path.join(root, 'temporal.db'),
      logFile: path.join(root, 'server.log'),
      startTimeoutMs: 120_000,
    });
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') }); // before a connection creates a chatty one
    } catch {
      /* already installed in this process */
    }
    native = await NativeConnection.connect({ address: server.address });
    connection = await Connection.connect({ address: server.address });
    client = new Client({ connection, namespace: 'default' });
    workers = await createSagaWorkers({
      connection: native,
      namespace: 'default',
      sagaHome: path.join(root, 'home'),
      hostId,
      taskQueue,
      workflowBundlePath: WORKFLOW_BUNDLE,
    });
    runs = workers.map((w) => w.run());
  }, 150_000);

  afterAll(async () => {
    await browser?.close();
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(runs);
    await native?.close();
    await connection?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const pending = (id: string) => (s: SagaStatus) => s.pending.some((p) => p.id === id);

  test('filtering by SagaName lists the saga and its task workflows', async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (.ci/run does) ` +
          'or point SAGA_CHROMIUM at a Chromium binary.',
      );
    }
    process.env.SAGA_HOME = path.join(root, 'home');
    process.env.SAGA_HOST_ID = hostId;
    process.env.SAGA_TASK_QUEUE = taskQueue;
    const start = async (name: string) => {
      const dir = mkdtempSync(path.join(root, `${name}-`));
      const repo = createSampleRepo(path.join(dir, 'greeting'));
      const input = await prepareSaga({ repo, argumentsText: '', plan: writeOneTaskPlan(dir, name), name });
      await startSaga(client, input);
    };
    const name = 'web-ui-saga';
    const other = 'web-ui-other';
    await Promise.all([start(name), start(other)]);
    await waitForStatus(client, name, pending('confirm-name'));
    await respond(client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
    await waitForStatus(client, name, pending('plan-approval-1'));
    await respond(client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
    await waitForStatus(client, name, pending('acceptance-1'));

    browser = await chromium.launchPersistentContext(mkdtempSync(path.join(root, 'chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 1000 },
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    const query = encodeURIComponent(`SagaName="${name}"`);
    await page.goto(`${server.uiUrl}/namespaces/default/workflows?query=${query}`, { timeout: 60_000 });

    const expected = [
      sagaWorkflowId(name),
      phaseWorkflowId(name, 'planning'),
      phaseWorkflowId(name, 'implementation', 1),
      taskWorkflowId(name, 1, 1),
      phaseWorkflowId(name, 'validation', 1),
    ];
    for (const id of expected) {
      await page.getByRole('link', { name: id, exact: true }).first().waitFor({ timeout: 30_000 });
    }
    // The filter applies: the other saga (running, on the same server) is not in the list.
    expect(await page.getByText(sagaWorkflowId(other), { exact: true }).count()).toBe(0);
    mkdirSync(SCREENSHOTS, { recursive: true });
    const screenshot = path.join(SCREENSHOTS, 'web-ui-saga-list.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(existsSync(screenshot)).toBe(true);

    // The task's page shows its summary (what task, which delegation) and its activities' summaries
    // (which agent, which attempt).
    const task = await client.workflow.getHandle(taskWorkflowId(name, 1, 1)).describe();
    await page.goto(`${server.uiUrl}/namespaces/default/workflows/${task.workflowId}/${task.runId}/history`, {
      timeout: 60_000,
    });
    await page.getByText('Task 1.1 Add greet() (delegation 1)').first().waitFor({ timeout: 30_000 });
    await page.getByText('implementer (task), task 1.1, attempt 1').first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'web-ui-task.png'), fullPage: true });

    for (const id of [name, other])
      await client.workflow.getHandle(sagaWorkflowId(id)).terminate('test done');
  }, 240_000);
});
