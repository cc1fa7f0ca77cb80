/**
 * `saga continue`: a saga terminated mid-implementation resumes in a new run seeded from its history's
 * last state; finished tasks are not redone (agent invocations are counted), and it completes.
 */
import path from 'node:path';
import { respond } from '../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { runSaga } from '../../harness/cli';
import { startApprovedSaga } from '../../harness/fleet-saga';
import {
  createInProcessSagaEnv,
  demoInvocations,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../harness/saga-env';

jest.setTimeout(240_000);

describe('saga continue', () => {
  let env: InProcessSagaEnv;
  let demoLog: string;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('continue');
    demoLog = env.demoLog;
  });
  afterAll(async () => env.close());

  const invocations = () => demoInvocations(demoLog);

  test('a terminated saga is continued from its last state without redoing finished tasks', async () => {
    // Task 2.1 runs long enough to be caught in flight.
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: {
        tasks: {
          '1.1': {
            attempts: [
              {
                files: {
                  'src/greet.js': "module.exports = { greet: (n = 'world') => `Hello, ${n}!` };\n",
                  'test/greet.test.js': "require('node:test')('ok', () => {});\n",
                },
              },
            ],
          },
          '1.2': {
            attempts: [
              { files: { 'test/greet-default.test.js': "require('node:test')('ok', () => {});\n" } },
            ],
          },
          '2.1': {
            attempts: [
              {
                sleep_ms: 4000,
                files: {
                  'bin/greet.js': '#!/usr/bin/env node\n',
                  'test/cli.test.js': "require('node:test')('ok', () => {});\n",
                },
              },
            ],
          },
        },
      },
    });
    await startApprovedSaga(env, {
      repo,
      planFile: GREETING_PLAN_FILE,
      name: 'resume-me',
      args: 'Add greeting',
    });

    await waitForStatus(env, 'resume-me', (s) => s.milestones[1]?.tasks[0]?.status === 'running');
    await new Promise((r) => setTimeout(r, 1000));
    await env.client.workflow.getHandle(sagaWorkflowId('resume-me')).terminate('simulated crash');
    const before = invocations().filter((i) => i.role === 'implementer');
    expect(before.map((i) => i.taskId).sort()).toEqual(['1.1', '1.2', '2.1']);

    const cont = await runSaga(['continue', 'resume-me', '--detach'], env.cliEnv);
    expect(cont.stderr).toBe('');
    expect(cont.code).toBe(0);
    expect(cont.stdout).toContain('resumed in a new run from its last state (2 finished task(s) kept');

    await waitForPending(env, 'resume-me', 'acceptance-1', 120_000);
    const after = invocations().filter((i) => i.role === 'implementer');
    // Only the task that was in flight ran again.
    expect(after.map((i) => i.taskId).sort()).toEqual(['1.1', '1.2', '2.1', '2.1']);
    await respond(env.client, 'resume-me', { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    const result = await env.client.workflow.getHandle(sagaWorkflowId('resume-me')).result();
    expect(result.phase).toBe('complete');
  });

  test('continue without a name picks the only active saga, and explains when there is none', async () => {
    const none = await runSaga(['continue', 'no-such'], env.cliEnv);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("No saga named 'no-such'");
    const done = await runSaga(['continue', 'resume-me'], env.cliEnv);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('is finished; nothing to continue');
  });
});
