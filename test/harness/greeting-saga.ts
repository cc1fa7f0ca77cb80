/** The sample greeting repo's saga with its plan file, as the chat tests drive it. */
import path from 'node:path';
import { prepareSaga, startSaga } from '../../src/client/commands/start';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../src/domain/contract/naming';
import type { SagaInput } from '../../src/domain/saga/saga-input';
import type { SagaTestEnv } from './saga-env';

/** Starts it (waiting at the name confirmation); with `uiBaseUrl`, its status carries a Web UI link. */
export async function startGreetingSaga(
  env: SagaTestEnv,
  name: string,
  opts: { uiBaseUrl?: string } = {},
): Promise<SagaInput> {
  const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
  const input = await prepareSaga({ repo, argumentsText: 'Add a greeting', plan: GREETING_PLAN_FILE, name });
  if (opts.uiBaseUrl) input.uiBaseUrl = opts.uiBaseUrl;
  await startSaga(env.client, input);
  return input;
}

/** Cancels a saga a test leaves waiting; best effort, at the end of a file. */
export async function cancelSagaQuietly(env: SagaTestEnv, name: string): Promise<void> {
  await env.client.workflow
    .getHandle(sagaWorkflowId(name))
    .cancel()
    .catch(() => undefined);
}
