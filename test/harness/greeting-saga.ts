/** The sample greeting repo's saga with its plan file, as the chat tests drive it. */
import path from 'node:path';
import { prepareSaga, startSaga } from '../../src/client/commands/start';
import { createSampleRepo, GREETING_PLAN_FILE, greetingPlan } from '../../src/demo/sample-repo';
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

/** Each task's files in the greeting plan: what the demo agent writes for it. */
const GREETING_TASK_FILES: Record<string, Record<string, string>> = {
  '1.1': {
    'src/greet.js': "'use strict';\nmodule.exports = { greet: (n = 'world') => `Hello, ${n}!` };\n",
    'test/greet.test.js': "'use strict';\n",
  },
  '1.2': { 'test/greet-default.test.js': "'use strict';\n" },
  '2.1': { 'bin/greet.js': "'use strict';\n", 'test/cli.test.js': "'use strict';\n" },
};

/**
 * The demo agent's script for the greeting saga (createSampleRepo's `script`): each task's run from `run`
 * (a sleep, a cost), and with `question`, a planner that asks it once (options 'Hello, NAME!' and 'Hello
 * NAME') before the greeting plan.
 */
export function greetingScript(
  run: (files: Record<string, string>) => unknown,
  question?: string,
): Record<string, unknown> {
  const tasks = Object.fromEntries(
    Object.entries(GREETING_TASK_FILES).map(([id, files]) => [id, run(files)]),
  );
  if (question === undefined) return { tasks };
  const planner = {
    problem: 'The sample library cannot greet anyone yet.',
    questions: [[{ id: 'style', text: question, options: ['Hello, NAME!', 'Hello NAME'], recommended: 0 }]],
    plan: greetingPlan(),
  };
  return { planner, tasks };
}
