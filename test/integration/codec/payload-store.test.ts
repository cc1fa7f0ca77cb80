/**
 * No payload cliff at any saga size, end to end, on the real server with the demo agent and bin/saga: with the store threshold set
 * low, the saga's large payloads (its plan, its carried state) travel as references to the payload store,
 * and the saga runs through both milestones of the greeting plan (2.1 depends on 1.1, of a milestone whose
 * task states have left the carried state); every integrated milestone's task states are in their record
 * file; `saga status --json` shows every task as before, and `saga continue` replays the histories.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { prepareSaga, startSaga } from '../../../src/client/commands/start';
import { getStatus, respond, waitForStatus } from '../../../src/client/saga-client';
import { dataConverterFromEnv } from '../../../src/codec/config';
import { payloadBytes, STORED_ENCODING } from '../../../src/codec/payload-store';
import { createSampleRepo, greetingPlan } from '../../../src/demo/sample-repo';
import type { MilestoneState, SagaStatus } from '../../../src/domain/contract/state';
import { statusQuery } from '../../../src/domain/saga/messages';
import { runSaga } from '../../harness/cli';
import { sagaRuns } from '../../harness/fleet-saga';
import { createSagaTestEnv, useEnvInProcess, type SagaTestEnv } from '../../harness/saga-env';

const NAME = 'stored-payloads';
const STORE_OVER = 4096;

let env: SagaTestEnv;
let client: Client;
let storeEnv: Record<string, string>;

beforeAll(async () => {
  env = await createSagaTestEnv('payload-store');
  storeEnv = { SAGA_PAYLOAD_DIR: env.tmp('payload-store'), SAGA_PAYLOAD_STORE_OVER: String(STORE_OVER) };
  Object.assign(process.env, storeEnv);
  useEnvInProcess(env);
  await env.startWorkers(); // the workers take the store from the environment
  client = new Client({
    connection: env.client.connection,
    namespace: 'default',
    dataConverter: dataConverterFromEnv(),
  });
}, 60_000);

afterAll(async () => {
  delete process.env.SAGA_PAYLOAD_DIR;
  delete process.env.SAGA_PAYLOAD_STORE_OVER;
  await env?.close();
});

type Payload = temporal.api.common.v1.IPayload;
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** Every payload of a history (search attributes apart). */
function payloadsOf(value: unknown, out: Payload[] = []): Payload[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return out;
  if (Array.isArray(value)) {
    value.forEach((item) => payloadsOf(item, out));
    return out;
  }
  const record = value as Record<string, unknown>;
  const metadata = record.metadata as Record<string, unknown> | undefined;
  if (metadata && typeof metadata === 'object' && metadata.encoding instanceof Uint8Array) {
    out.push(record as Payload);
    return out;
  }
  for (const [key, item] of Object.entries(record)) if (key !== 'searchAttributes') payloadsOf(item, out);
  return out;
}

const pending = (id: string) => (s: SagaStatus) => s.pending.some((p) => p.id === id);

test('a saga whose large payloads are stored runs to acceptance; finished milestones are records, shown whole', async () => {
  const dir = env.tmp('saga');
  const repo = createSampleRepo(path.join(dir, 'greeting'));
  const planFile = path.join(dir, 'plan.yaml');
  writeFileSync(planFile, YAML.stringify({ ...greetingPlan(), name: NAME }));
  const input = await prepareSaga({ repo, argumentsText: 'Greet by name', plan: planFile, name: NAME });
  await startSaga(client, input);
  await waitForStatus(client, NAME, pending('confirm-name'));
  await respond(client, NAME, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
  await waitForStatus(client, NAME, pending('plan-approval-1'), { timeoutMs: 60_000 });
  await respond(client, NAME, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
  await waitForStatus(client, NAME, pending('acceptance-1'), { timeoutMs: 240_000 });

  // The saga keeps integrated milestones as records: their lines, no task states.
  const own = await client.workflow.getHandle(`saga-${NAME}`).query(statusQuery);
  expect(own.milestones.map((m: MilestoneState) => [m.id, m.status, m.tasks.length, m.record?.file])).toEqual(
    [
      [1, 'integrated', 0, 'runs/milestones/1.json'],
      [2, 'integrated', 0, 'runs/milestones/2.json'],
    ],
  );
  const record = JSON.parse(readFileSync(path.join(input.sagaDir, 'runs/milestones/1.json'), 'utf8'));
  expect(record.tasks.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([
    ['1.1', 'integrated'],
    ['1.2', 'integrated'],
  ]);

  // bin/saga shows every task as before (from the records), with the store's settings.
  const cli = { ...env.cliEnv, ...storeEnv };
  const shown = await runSaga(['status', NAME, '--json'], cli);
  expect(shown).toMatchObject({ code: 0, stderr: '' });
  const status = JSON.parse(shown.stdout) as SagaStatus;
  expect(status.milestones.map((m) => [m.id, m.record, m.tasks.map((t) => [t.id, t.status])])).toEqual([
    [
      1,
      undefined,
      [
        ['1.1', 'integrated'],
        ['1.2', 'integrated'],
      ],
    ],
    [2, undefined, [['2.1', 'integrated']]],
  ]);
  expect(status.milestones[0]!.tasks[0]!.commit).toMatch(/^[0-9a-f]{40}$/);
  const continued = await runSaga(['continue', NAME, '--detach'], cli, 120_000);
  expect({ code: continued.code, stderr: continued.stderr }).toEqual({ code: 0, stderr: '' });
  expect(continued.stdout).not.toContain('cannot replay');

  await respond(client, NAME, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
  await waitForStatus(client, NAME, (s) => s.phase === 'complete', { timeoutMs: 60_000 });
  expect((await getStatus(client, NAME)).milestones[1]!.tasks[0]).toMatchObject({
    id: '2.1',
    status: 'integrated',
  });

  // Every payload in every history is under the threshold (plus its reference); some went to the store.
  let storedCount = 0;
  for (const run of await sagaRuns(env, NAME)) {
    const history = await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    for (const payload of payloadsOf(history.events)) {
      const size = payloadBytes(payload);
      expect({ workflow: run.workflowId, size: size <= STORE_OVER + 512 }).toEqual({
        workflow: run.workflowId,
        size: true,
      });
      if (text(payload.metadata!.encoding) === STORED_ENCODING) storedCount++;
    }
  }
  expect(storedCount).toBeGreaterThan(0);
  expect(readdirSync(storeEnv.SAGA_PAYLOAD_DIR!, { recursive: true }).length).toBeGreaterThan(0);
}, 400_000);
