/**
 * The Saga seed's record of a saga, end to end: PROGRESS.md keeps every worker's ids after its task ended
 * and its log in time order.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../src/client/saga-client';
import type { SagaInput } from '../src/domain/saga-input';
import type { SagaStatus } from '../src/domain/state';
import { startOneTaskSaga } from './harness/one-task-plan';
import { createInProcessSagaEnv, waitForPending, type InProcessSagaEnv } from './harness/saga-env';

jest.setTimeout(240_000);

const NAME = 'record-check';

describe('the saga record', () => {
  let env: InProcessSagaEnv;
  let input: SagaInput;
  let atAcceptance: SagaStatus;
  const read = (file: string) => readFileSync(path.join(input.sagaDir, file), 'utf8');

  beforeAll(async () => {
    env = await createInProcessSagaEnv('record');
    input = await startOneTaskSaga(env.client, env.tmp('repo'), NAME, 'Add a greeting');
    await waitForPending(env, NAME, 'confirm-name');
    await respond(env.client, NAME, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
    await waitForPending(env, NAME, 'plan-approval-1', 60_000);
    await respond(env.client, NAME, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
    atAcceptance = await waitForPending(env, NAME, 'acceptance-1', 120_000);
  });
  afterAll(async () => {
    await respond(env.client, NAME, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' }).catch(
      () => undefined,
    );
    await env.close();
  });

  test("PROGRESS.md keeps each worker's ids after its task ended, and its log in time order", () => {
    const task = atAcceptance.milestones[0]!.tasks[0]!;
    expect(task.status).toBe('integrated');
    const progress = read('PROGRESS.md');
    const line = progress.split('\n').find((l) => l.startsWith('- [x] 1.1 '))!;
    expect(line).toContain(`branch \`${task.branch}\``);
    expect(line).toContain(`workflow \`${task.workflowId}\` run \`${task.runId}\``);
    expect(line).toContain('agent `demo` session none reported');
    expect(line).toContain(
      `worktree \`${path.join(input.worktreeRoot, `saga-${NAME}-m1t1`)}\` (removed after its handoff)`,
    );
    const log = progress.split('## Log (newest first)\n\n')[1]!.trim().split('\n');
    const stamps = log.map((l) => l.slice(2, 26));
    expect(stamps).toEqual([...stamps].sort().reverse());
  });
});
