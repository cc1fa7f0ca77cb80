/**
 * The delivery activities as the saga's worker serves them: createActivities() (src/activities/index.ts)
 * on a worker of the run's REAL Temporal dev server, called by a workflow with a retry policy
 * (test/harness/workflows/forge-probe.ts), against the GitHub stand-in. The token is read from the
 * worker's process.env at the moment of the call (set after the worker started); a refusal (401, 404)
 * fails at once as non-retryable; a forge that does not answer is retried until the attempts run out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../../src/activities';
import type { PullRequestLook } from '../../../../src/activities/forge/delivery-activities';
import { githubForge } from '../../../../src/activities/forge/github';
import type { ForgeTarget } from '../../../../src/activities/forge/port';
import { quietRuntime } from '../../../harness/saga-env';
import { testServer } from '../../../harness/server';
import {
  forgeProbeWorkflow,
  type ForgeProbeInput,
  type ForgeProbeResult,
} from '../../../harness/workflows/forge-probe';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

const QUEUE = `forge-probe-${process.pid}`;
const TOKEN_ENV = 'SAGA_TEST_WORKER_FORGE_TOKEN';
/** A real commit in the stand-in's repository (set in beforeAll): the delivery branch's head. */
let SHA1: string;
const sagaHome = mkdtempSync(path.join(os.tmpdir(), 'saga-forge-worker-'));
let gh: GitHubStandIn;
let worker: Worker;
let running: Promise<void>;
let client: Client;
let connection: Connection;
let nativeConnection: NativeConnection;

const targetAt = (url: string): ForgeTarget => ({
  kind: 'github',
  url,
  owner: 'octo',
  repo: 'widgets',
  tokenEnv: TOKEN_ENV,
});

function probe(input: Omit<ForgeProbeInput, 'queue'>): Promise<ForgeProbeResult> {
  return client.workflow.execute(forgeProbeWorkflow, {
    taskQueue: QUEUE,
    workflowId: `forge-probe-${Date.now()}-${Math.random().toString(16).slice(2)}`,
    args: [{ ...input, queue: QUEUE }],
  });
}

beforeAll(async () => {
  quietRuntime();
  const { address } = testServer();
  nativeConnection = await NativeConnection.connect({ address });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: QUEUE,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('../../../harness/workflows/forge-probe'),
      logger: new DefaultLogger('WARN'),
    }),
    activities: createActivities({ sagaHome }),
  });
  running = worker.run();
  connection = await Connection.connect({ address });
  client = new Client({ connection });
  gh = await startGitHubStandIn({ owner: 'octo', repo: 'widgets' });
  SHA1 = gh.commit('saga/greet/deliver-m1', { 'greet.txt': 'hello\n' }, 'Greeting');
  process.env[TOKEN_ENV] = gh.state.owner.token;
  await githubForge(targetAt(gh.url)).createPullRequest({
    head: 'saga/greet/deliver-m1',
    base: 'main',
    title: 'm1',
    body: '',
    draft: true,
  });
}, 120_000);

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  worker?.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  const violations = gh ? [...gh.violations] : [];
  await gh?.close();
  rmSync(sagaHome, { recursive: true, force: true });
  expect(violations).toEqual([]);
});

const look = (url: string) => ({
  target: targetAt(url),
  prs: [{ number: 1, headSha: SHA1, etag: null }],
});

test('the worker serves lookAtPullRequests with the token its environment holds at the call', async () => {
  const result = await probe({ maximumAttempts: 3, activity: 'lookAtPullRequests', input: look(gh.url) });
  if (!result.ok) throw new Error(`expected a look, got ${result.message}`);
  const [one] = result.value as PullRequestLook[];
  expect(one).toMatchObject({ number: 1, pullRequest: { head: 'saga/greet/deliver-m1', draft: true } });

  // The token changed in the worker's environment: the next call uses the new one (and the forge refuses it).
  process.env[TOKEN_ENV] = 'ghp_revoked';
  const before = gh.requests.length;
  const refused = await probe({ maximumAttempts: 3, activity: 'lookAtPullRequests', input: look(gh.url) });
  process.env[TOKEN_ENV] = gh.state.owner.token;
  expect(refused).toMatchObject({
    ok: false,
    retryState: 'NON_RETRYABLE_FAILURE',
    type: 'ForgeUnauthorized',
  });
  if (!refused.ok) expect(refused.message).toContain('401 Requires authentication');
  // One attempt, no retry: its first read (the PR, whose comment count decides the rest) is refused.
  expect(gh.requests.length - before).toBe(1);
});

test('an unknown PR fails at once; a forge that does not answer is retried until the attempts run out', async () => {
  const unknown = await probe({
    maximumAttempts: 3,
    activity: 'markReady',
    input: { target: targetAt(gh.url), numbers: [99] },
  });
  expect(unknown).toMatchObject({ ok: false, retryState: 'NON_RETRYABLE_FAILURE', type: 'ForgeNotFound' });

  const down = http.createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: 'Service Unavailable' }));
  });
  let hits = 0;
  down.on('request', () => hits++);
  await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
    const result = await probe({
      maximumAttempts: 2,
      activity: 'markReady',
      input: { target: targetAt(url), numbers: [1] },
    });
    expect(result).toMatchObject({
      ok: false,
      retryState: 'MAXIMUM_ATTEMPTS_REACHED',
      type: 'ForgeUnavailable',
    });
    expect(hits).toBe(2);
  } finally {
    down.closeAllConnections();
    await new Promise((resolve) => down.close(resolve));
  }
});
