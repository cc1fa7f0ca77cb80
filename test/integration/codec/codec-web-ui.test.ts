/**
 * The payload codec, the Web UI side: a dev server WITH its UI and `--ui-codec-endpoint` pointing at a real
 * `bin/saga codec serve`, a saga started with SAGA_CODEC_KEY set, and headless Chromium (playwright-core)
 * on the saga's page: the decoded input (the goal) is shown. With the codec endpoint unreachable the same
 * page says the codec server could not be reached and shows no goal, only the ciphertext the server stores.
 * Screenshots go to .test-artifacts/screenshots/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { dataConverterFromEnv } from '../../../src/codec/config';
import { waitForStatus } from '../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { freePort, startDevServer, type DevServer } from '../../../src/worker/dev-server';
import { createSagaWorkers } from '../../../src/worker/worker';
import { SAGA_BIN } from '../../harness/cli';
import { startOneTaskSaga } from '../../harness/one-task-plan';
import { quietRuntime } from '../../harness/saga-env';
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

const KEY = randomBytes(32).toString('hex');
const MARKER = `okapi-${randomUUID().slice(0, 8)}`;
/** The endpoint answers only under its secret path, which the UI's endpoint URL carries. */
const SECRET = randomBytes(18).toString('base64url');
const GOAL = `Teach the greeting to say hello to the ${MARKER}`;
const NAME = 'codec-web-ui';

/** `bin/saga codec serve` as a real process; resolves once it listens. */
function serveCodec(port: number, origin: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [SAGA_BIN, 'codec', 'serve', '--port', String(port), '--origin', origin],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`saga codec serve did not start: ${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Codec endpoint listening on')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`saga codec serve exited with ${code}: ${output}`));
    });
  });
}

describe('the Temporal Web UI through the codec endpoint', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-codec-ui-'));
  const hostId = `codec-ui-${path.basename(root).slice(-6)}`.toLowerCase();
  const taskQueue = `saga-test-${hostId}`;
  let server: DevServer;
  let codecServer: ChildProcess | undefined;
  let codecPort = 0;
  let native: NativeConnection;
  let connection: Connection;
  let client: Client;
  let workers: Worker[] = [];
  let runs: Promise<void>[] = [];
  let browser: BrowserContext | undefined;

  beforeAll(async () => {
    process.env.SAGA_CODEC_KEY = KEY;
    Object.assign(process.env, {
      SAGA_HOME: path.join(root, 'home'),
      SAGA_HOST_ID: hostId,
      SAGA_TASK_QUEUE: taskQueue,
    });
    // The endpoint's address goes to the dev server; its origin (the UI's) to the endpoint.
    const [port, uiPort] = [await freePort(), await freePort()];
    codecPort = await freePort();
    server = await startDevServer({
      dbFile: path.join(root, 'temporal.db'),
      logFile: path.join(root, 'server.log'),
      port,
      uiPort,
      uiCodecEndpoint: `http://127.0.0.1:${codecPort}/${SECRET}`,
      startTimeoutMs: 120_000,
    });
    codecServer = await serveCodec(codecPort, server.uiUrl!, {
      ...process.env,
      SAGA_CODEC_ENDPOINT_TOKEN: SECRET,
    });
    quietRuntime();
    native = await NativeConnection.connect({ address: server.address });
    connection = await Connection.connect({ address: server.address });
    client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFromEnv() });
    workers = await createSagaWorkers({
      connection: native,
      namespace: 'default',
      sagaHome: path.join(root, 'home'),
      hostId,
      taskQueue,
      workflowBundlePath: WORKFLOW_BUNDLE,
    });
    runs = workers.map((w) => w.run());
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(runs);
    await native?.close();
    await connection?.close();
    if (codecServer?.exitCode === null) {
      const exited = new Promise((resolve) => codecServer!.once('exit', resolve));
      codecServer.kill('SIGTERM');
      await exited;
    }
    await server?.stop();
    delete process.env.SAGA_CODEC_KEY;
    rmSync(root, { recursive: true, force: true });
  });

  /** The page's text once `expected` shows, or after `timeoutMs` (for a check that it does not). */
  const pageText = async (page: Page, expected: string, timeoutMs: number): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    let body = '';
    while (Date.now() < deadline) {
      body = await page.locator('body').innerText();
      if (body.includes(expected)) return body;
      await page.waitForTimeout(500);
    }
    return body;
  };

  test("the saga's page shows its decoded input; without the endpoint, none of it", async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(
        `Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (.ci/run does) ` +
          'or point SAGA_CHROMIUM at a Chromium binary.',
      );
    const dir = mkdtempSync(path.join(root, 'saga-'));
    await startOneTaskSaga(client, dir, NAME, GOAL);
    await waitForStatus(client, NAME, (s) => s.pending.some((p) => p.id === 'confirm-name'));
    const { runId } = await client.workflow.getHandle(sagaWorkflowId(NAME)).describe();
    const url = `${server.uiUrl}/namespaces/default/workflows/${sagaWorkflowId(NAME)}/${runId}/history`;

    browser = await chromium.launchPersistentContext(mkdtempSync(path.join(root, 'chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1400, height: 1400 },
    });
    mkdirSync(SCREENSHOTS, { recursive: true });

    const page = browser.pages()[0] ?? (await browser.newPage());
    // The browser calls the endpoint itself (POST /decode?preserveStorageRefs=true), not the UI server.
    const toCodec = (url: URL) => url.port === String(codecPort);
    const decodeCalls: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (toCodec(url) && url.pathname === `/${SECRET}/decode`) decodeCalls.push(request.method());
    });
    await page.goto(url, { timeout: 60_000 });
    const decoded = await pageText(page, MARKER, 60_000);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'codec-web-ui-decoded.png'), fullPage: true });
    expect({ goalShown: decoded.includes(MARKER), decodeCalls: decodeCalls.includes('POST') }).toEqual({
      goalShown: true,
      decodeCalls: true,
    });

    // The same page with the endpoint unreachable: what the server holds is all the browser gets.
    const blind = await browser.newPage();
    await blind.route(toCodec, (route) => route.abort());
    await blind.goto(url, { timeout: 60_000 });
    const encrypted = await pageText(blind, 'Codec Server could not connect', 60_000);
    await blind.getByText('Workflow Execution Started').first().waitFor({ timeout: 30_000 });
    await blind.screenshot({ path: path.join(SCREENSHOTS, 'codec-web-ui-encrypted.png'), fullPage: true });
    expect(encrypted).toContain('Codec Server could not connect');
    const shown = await blind.locator('body').innerText();
    expect({ goalShown: shown.includes(MARKER), inputKeysShown: shown.includes('"goal"') }).toEqual({
      goalShown: false,
      inputKeysShown: false,
    });
    // While the page with the endpoint read it in clear, and had no such banner.
    expect(decoded).toContain('"goal"');
    expect(decoded).not.toContain('Codec Server could not connect');

    await client.workflow.getHandle(sagaWorkflowId(NAME)).terminate('test done');
  }, 240_000);
});
