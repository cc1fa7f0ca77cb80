import path from 'node:path';
import { prepareSaga, startSaga } from '../src/client/commands/start';
import { respond } from '../src/client/saga-client';
import { createSampleRepo } from '../src/demo/sample-repo';
import { createSagaTestEnv } from '../test/harness/saga-env';
test('race', async () => {
  const env = await createSagaTestEnv('race');
  process.env.SAGA_HOME = env.sagaHome; process.env.SAGA_HOST_ID = env.hostId; process.env.SAGA_TASK_QUEUE = env.taskQueue;
  await env.startWorkers();
  const repo = createSampleRepo(path.join(env.tmp('repo'), 'g'));
  for (let i = 0; i < 15; i++) {
    const input = await prepareSaga({ repo, argumentsText: 'x', name: `race-${i}` });
    await startSaga(env.client, input);
    try { await respond(env.client, input.name, { interactionId: 'confirm-name', choice: 'cancel' }); }
    catch (e: any) { console.log(i, e.name, e.message, e.code, e.details, e.cause && (e.cause.message + ' ' + e.cause.details)); }
  }
  await env.close();
}, 120000);
