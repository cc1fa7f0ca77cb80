/**
 * Determinism of the spec-gap question and the acceptance issue checks: histories recorded on the code
 * before them (a spec gap escalated and retried, an acceptance round whose issue had no check, and the fix
 * round whose no-op fix passed) replay on the current code, which takes the recorded path there.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { createSagaTestEnv, type SagaTestEnv } from './harness/saga-env';
import { WORKFLOW_BUNDLE } from './harness/server';

const HISTORIES = path.join(__dirname, 'fixtures', 'histories');
const replayOptions = { workflowBundle: { codePath: WORKFLOW_BUNDLE } };
const recorded = (file: string): unknown => JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8'));

describe('histories recorded before spec-gap questions and issue checks', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('replay-acceptance'); // quiets the SDK's logging for the replay workers
  });
  afterAll(async () => env.close());

  test.each([
    ['implementation-spec-gap-escalation.json', 'saga-old-rec-implementation'],
    ['acceptance-report-round.json', 'saga-old-rec-acceptance'],
    ['implementation-fix-round.json', 'saga-old-rec-implementation-2'],
  ])('%s replays', async (file, workflowId) => {
    await expect(Worker.runReplayHistory(replayOptions, recorded(file), workflowId)).resolves.toBeUndefined();
  });
});
