/**
 * The tracker activities as the saga's worker serves them: createActivities() (src/activities/index.ts) on a
 * worker of the run's REAL Temporal dev server, called through the saga's own proxies (trackerActivities)
 * by a workflow (test/harness/workflows/tracker-probe.ts), against the REAL Gitea behind a proxy whose first
 * answers are scripted. A 429 with `Retry-After: 1` and then a 503 are retried, the first after the wait
 * the tracker asked for; the workpad is then written once, and a second write edits it in place. What the
 * tracker refuses (an unknown issue) and a token that is not set fail at once, naming the variable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../../src/activities';
import { WORKPAD_MARKER } from '../../../../src/domain/tracker/workpad';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { quietRuntime } from '../../../harness/saga-env';
import { startScriptedProxy, type ScriptedProxy } from '../../../harness/scripted-proxy';
import { testServer } from '../../../harness/server';
import {
  trackerProbeWorkflow,
  type TrackerProbeInput,
  type TrackerProbeResult,
} from '../../../harness/workflows/tracker-probe';

const QUEUE = `tracker-probe-${process.pid}`;
const TOKEN_ENV = 'SAGA_TEST_WORKER_TRACKER_TOKEN';
const sagaHome = mkdtempSync(path.join(os.tmpdir(), 'saga-tracker-worker-'));
let gitea: TestGitea;
let proxy: ScriptedProxy;
let worker: Worker;
let running: Promise<void>;
let client: Client;
let connection: Connection;
let nativeConnection: NativeConnection;
let issueNumber: number;

const tracker = (tokenEnv = TOKEN_ENV) => ({ kind: 'gitea' as const, url: proxy.url, tokenEnv });
const refTo = (number: number) => ({ kind: 'gitea' as const, owner: 'alice', repo: 'demo', number });

function probe(input: Omit<TrackerProbeInput, 'queue'>): Promise<TrackerProbeResult> {
  return client.workflow.execute(trackerProbeWorkflow, {
    taskQueue: QUEUE,
    workflowId: `tracker-probe-${Date.now()}-${Math.random().toString(16).slice(2)}`,
    args: [{ ...input, queue: QUEUE }],
  });
}

async function commentBodies(): Promise<string[]> {
  const list = await gitea.api('alice', 'GET', `/repos/alice/demo/issues/${issueNumber}/comments`);
  return z
    .array(z.object({ body: z.string() }))
    .parse(list)
    .map((c) => c.body);
}

beforeAll(async () => {
  quietRuntime();
  gitea = await startGitea();
  proxy = await startScriptedProxy(gitea.url);
  const made = await gitea.api('alice', 'POST', '/repos/alice/demo/issues', { title: 'Workpad', body: '' });
  issueNumber = z.object({ number: z.number() }).parse(made).number;
  const { address } = testServer();
  nativeConnection = await NativeConnection.connect({ address });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: QUEUE,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('../../../harness/workflows/tracker-probe'),
      logger: new DefaultLogger('WARN'),
    }),
    activities: createActivities({ sagaHome }),
  });
  running = worker.run();
  connection = await Connection.connect({ address });
  client = new Client({ connection });
  process.env[TOKEN_ENV] = gitea.users.alice.token;
}, 120_000);

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  worker?.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  await proxy?.close();
  await gitea?.stop();
  rmSync(sagaHome, { recursive: true, force: true });
});

test('a 429 (Retry-After: 1) then a 503 are waited out, and the workpad is written exactly once', async () => {
  proxy.script(
    { status: 429, headers: { 'Retry-After': '1' }, body: { message: 'rate limited' } },
    { status: 503, body: { message: 'maintenance' } },
  );
  const input = { tracker: tracker(), ref: refTo(issueNumber), body: 'plan', commentId: null };
  const first = await probe({ activity: 'writeWorkpad', input });
  if (!first.ok) throw new Error(`writeWorkpad failed: ${first.message}`);
  expect(await commentBodies()).toEqual([`${WORKPAD_MARKER}\nplan`]);

  const [limited, down, passed] = proxy.seen;
  expect([limited!.scripted, down!.scripted, passed!.scripted]).toEqual([429, 503, null]);
  // The retry after the 429 came when the tracker said (1 s), not at the proxy's 5 s backoff.
  expect(down!.at - limited!.at).toBeGreaterThanOrEqual(1000);
  expect(down!.at - limited!.at).toBeLessThan(4000);
  // The 503 named no wait: Temporal's backoff (5 s doubled on the second attempt) applied.
  expect(passed!.at - down!.at).toBeGreaterThanOrEqual(5000);

  // No comment id known (a lost answer, a replay): the workpad is found by its marker and edited in place.
  const second = await probe({ activity: 'writeWorkpad', input: { ...input, body: 'milestone 1' } });
  expect(second).toEqual({ ok: true, value: first.value });
  expect(await commentBodies()).toEqual([`${WORKPAD_MARKER}\nmilestone 1`]);
}, 60_000);

test('an unknown issue and a token that is not set fail at once, without retries', async () => {
  const before = proxy.seen.length;
  const unknown = await probe({
    activity: 'setIssuePhase',
    input: { tracker: tracker(), ref: refTo(9999), phase: 'planning' },
  });
  expect(unknown).toMatchObject({ ok: false, retryState: 'NON_RETRYABLE_FAILURE', type: 'TrackerNotFound' });

  const noToken = await probe({
    activity: 'readTrackerIssue',
    input: { tracker: tracker('SAGA_TEST_UNSET_TRACKER_TOKEN'), ref: refTo(issueNumber) },
  });
  expect(noToken).toMatchObject({
    ok: false,
    retryState: 'NON_RETRYABLE_FAILURE',
    type: 'TrackerTokenMissing',
  });
  if (!noToken.ok) {
    expect(noToken.message).toContain('SAGA_TEST_UNSET_TRACKER_TOKEN');
    expect(noToken.message).not.toContain(gitea.users.alice.token);
  }
  // The missing token was noticed before any call: only the unknown issue's calls reached the tracker.
  expect(proxy.seen.slice(before).every((s) => !s.call.includes(`/issues/${issueNumber}`))).toBe(true);
}, 60_000);
