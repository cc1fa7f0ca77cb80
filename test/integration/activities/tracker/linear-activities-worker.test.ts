/**
 * The tracker activities with a Linear connection as the saga's worker serves them: createActivities() on a
 * worker of the run's REAL Temporal dev server, called through the saga's own proxies (trackerActivities)
 * by a workflow (test/harness/workflows/tracker-probe.ts), against the Linear stand-in (every document
 * validated against Linear's schema). A 429 with Retry-After and then a 503 are waited out and the workpad
 * is written once; a second write edits it; the phase moves label and state; an unknown issue fails at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../../src/activities';
import { WORKPAD_MARKER } from '../../../../src/domain/tracker/workpad';
import { quietRuntime } from '../../../harness/saga-env';
import { testServer } from '../../../harness/server';
import {
  trackerProbeWorkflow,
  type TrackerProbeInput,
  type TrackerProbeResult,
} from '../../../harness/workflows/tracker-probe';
import { type LinearStandIn, startLinearStandIn } from '../../../standins/linear/server';

const QUEUE = `linear-tracker-probe-${process.pid}`;
const TOKEN_ENV = 'SAGA_TEST_WORKER_LINEAR_KEY';
const sagaHome = mkdtempSync(path.join(os.tmpdir(), 'saga-linear-worker-'));
let linear: LinearStandIn;
let worker: Worker;
let running: Promise<void>;
let client: Client;
let connection: Connection;
let nativeConnection: NativeConnection;

const tracker = () => ({ kind: 'linear' as const, url: linear.apiUrl, tokenEnv: TOKEN_ENV });
const ref = (number: number) => ({ kind: 'linear' as const, team: 'ENG', number });

function probe(input: Omit<TrackerProbeInput, 'queue'>): Promise<TrackerProbeResult> {
  return client.workflow.execute(trackerProbeWorkflow, {
    taskQueue: QUEUE,
    workflowId: `linear-probe-${Date.now()}-${Math.random().toString(16).slice(2)}`,
    args: [{ ...input, queue: QUEUE }],
  });
}

beforeAll(async () => {
  quietRuntime();
  linear = await startLinearStandIn();
  linear.addTeam('ENG');
  process.env[TOKEN_ENV] = linear.addUser('alice', ['ENG']).apiKey;
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
}, 120_000);

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  worker?.shutdown();
  await running;
  await connection?.close();
  await nativeConnection?.close();
  await linear?.close();
  rmSync(sagaHome, { recursive: true, force: true });
});

afterEach(() => {
  expect(linear.violations.splice(0)).toEqual([]);
});

test('429 (Retry-After: 2) then 503 are waited out; the workpad is written once, then edited', async () => {
  const issue = linear.addIssue('ENG', { title: 'Workpad' });
  const comments = () => linear.workspace.comments.filter((c) => c.issueId === issue.id).map((c) => c.body);
  linear.failNext(1, 429, 2);
  linear.failNext(1, 503);
  const input = { tracker: tracker(), ref: ref(issue.number), body: 'plan', commentId: null };
  const started = Date.now();
  const first = await probe({ activity: 'writeWorkpad', input });
  if (!first.ok) throw new Error(`writeWorkpad failed: ${first.message}`);
  expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  expect(linear.operations.slice(0, 2)).toEqual(['(rate limited)', '(unavailable)']);
  expect(comments()).toEqual([`${WORKPAD_MARKER}\nplan`]);
  const second = await probe({ activity: 'writeWorkpad', input: { ...input, body: 'milestone 1' } });
  expect(second).toEqual({ ok: true, value: first.value });
  expect(comments()).toEqual([`${WORKPAD_MARKER}\nmilestone 1`]);
}, 60_000);

test('setIssuePhase moves label and state; an unknown issue fails at once', async () => {
  const issue = linear.addIssue('ENG', { title: 'Phase' });
  const moved = await probe({
    activity: 'setIssuePhase',
    input: { tracker: tracker(), ref: ref(issue.number), phase: 'review' },
  });
  expect(moved).toMatchObject({ ok: true });
  expect(linear.look(`ENG-${issue.number}`)).toEqual({ labels: ['saga:review'], state: 'In Review' });
  const unknown = await probe({
    activity: 'setIssuePhase',
    input: { tracker: tracker(), ref: ref(999), phase: 'planning' },
  });
  expect(unknown).toMatchObject({ ok: false, retryState: 'NON_RETRYABLE_FAILURE', type: 'TrackerNotFound' });
}, 60_000);
