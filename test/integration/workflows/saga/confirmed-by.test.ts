/**
 * A saga whose name was confirmed before it started (`saga watch`: the label is the confirmation): the real
 * saga on the real server answers confirm-name itself as `input.confirmedBy`, through its hub, so the answer
 * is recorded like any other; it goes on to planning without anyone answering.
 */
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { answersQuery } from '../../../../src/domain/saga/messages';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

describe('a saga confirmed before it started', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('confirmed');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('confirm-name is answered at once by whoever confirmed it, and planning starts', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const prepared = await prepareSaga({
      repo,
      argumentsText: 'Add a greeting',
      plan: GREETING_PLAN_FILE,
      name: 'confirmed',
    });
    await startSaga(env.client, { ...prepared, confirmedBy: 'saga watch (label saga)' });
    const atApproval = await waitForPending(env, 'confirmed', 'plan-approval-1');
    expect(atApproval.pending.map((i) => i.id)).toEqual(['plan-approval-1']);
    const handle = env.client.workflow.getHandle(sagaWorkflowId('confirmed'));
    const answers = await handle.query(answersQuery);
    expect(answers[0]).toMatchObject({
      interactionId: 'confirm-name',
      choice: 'confirm',
      user: 'saga watch (label saga)',
    });
    await handle.terminate('test over');
  }, 120_000);
});
