/**
 * `saga cancel` mid-implementation: the running agent's process tree is killed, its work is committed to
 * the task branch, no saga worktree is left, and the saga ends `cancelled` (branches stay). A saga cancelled
 * while it waits shows no question any more.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { createSampleRepo, demoScript, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { runSaga } from '../../harness/cli';
import { startApprovedSaga } from '../../harness/fleet-saga';
import {
  createInProcessSagaEnv,
  demoInvocations,
  sagaStatus,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../harness/saga-env';
import { processesWithEnv } from '../../harness/processes';
import { WORKFLOW_BUNDLE } from '../../harness/server';

jest.setTimeout(180_000);

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('saga cancel', () => {
  let env: InProcessSagaEnv;
  let demoLog: string;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('cancel');
    demoLog = env.demoLog;
  });
  afterAll(async () => env.close());

  test('stops the agents, commits their work and removes the worktrees', async () => {
    const script = demoScript();
    const tasks = script.tasks as Record<string, { attempts: Record<string, unknown>[] }>;
    // Task 1.1 writes its files, then works for a long time.
    tasks['1.1']!.attempts = [{ ...tasks['1.1']!.attempts[0], sleep_ms: 60_000 }];
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), { script: { tasks } });
    await startApprovedSaga(env, {
      repo,
      planFile: GREETING_PLAN_FILE,
      name: 'cancel-me',
      args: 'Add greeting',
    });
    await waitForStatus(env, 'cancel-me', (s) => s.milestones[0]?.tasks[0]?.status === 'running');
    // The log exists before the agent writes it (saga makes the file it may write): wait for its line.
    const logged = () => existsSync(demoLog) && demoInvocations(demoLog).length > 0;
    for (let i = 0; i < 50 && !logged(); i++) await new Promise((r) => setTimeout(r, 200));
    expect(demoInvocations(demoLog)).toHaveLength(1);
    // Confined, the agent's logged pid is its namespace's: the host finds it by its environment.
    const agent = () => processesWithEnv(`SAGA_DEMO_LOG=${demoLog}`);
    await new Promise((r) => setTimeout(r, 1000)); // the agent has written its files by now
    expect(agent().length).toBeGreaterThan(0);

    const cancelled = await runSaga(['cancel', 'cancel-me'], env.cliEnv);
    expect(cancelled.code).toBe(0);
    const result = await env.client.workflow.getHandle(sagaWorkflowId('cancel-me')).result();
    expect(result.phase).toBe('cancelled');
    // The status still shows the task as the implementation phase last knew it (it keeps the task states).
    const status = await sagaStatus(env, 'cancel-me');
    expect(status.phase).toBe('cancelled');
    expect(status.milestones[0]?.tasks[0]?.status).toBe('running');
    expect(status.log.some((l) => l.includes('Task 1.1 add-greet: agent started'))).toBe(true);

    expect(agent()).toEqual([]);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    // The partial work is on the task branch, not lost.
    const files = git(repo, 'ls-tree', '-r', '--name-only', 'saga/cancel-me/m1t1-add-greet').split('\n');
    expect(files).toEqual(expect.arrayContaining(['src/greet.js', 'test/greet.test.js']));
    expect(git(repo, 'log', '-1', '--format=%s', 'saga/cancel-me/m1t1-add-greet')).toContain(
      'task 1.1 add-greet',
    );

    const again = await runSaga(['cancel', 'cancel-me'], env.cliEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not running');
  });

  test('a saga cancelled while it waits asks nothing more (status, saga list), and its history replays', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const started = await runSaga(
      ['start', '--repo', repo, '--name', 'cancel-waiting', '--', 'Add a greeting'],
      env.cliEnv,
    );
    expect(started.code).toBe(0);
    await waitForPending(env, 'cancel-waiting', 'confirm-name');
    expect((await runSaga(['cancel', 'cancel-waiting'], env.cliEnv)).code).toBe(0);
    const handle = env.client.workflow.getHandle(sagaWorkflowId('cancel-waiting'));
    expect((await handle.result()).phase).toBe('cancelled');

    const status = JSON.parse((await runSaga(['status', 'cancel-waiting', '--json'], env.cliEnv)).stdout) as {
      phase: string;
      pending: unknown[];
    };
    expect(status).toMatchObject({ phase: 'cancelled', pending: [] });
    expect((await runSaga(['status', 'cancel-waiting'], env.cliEnv)).stdout).not.toContain('Waiting for you');
    const listed = JSON.parse((await runSaga(['list', '--json'], env.cliEnv)).stdout) as {
      name: string;
      awaitingInput: boolean;
    }[];
    expect(listed.find((s) => s.name === 'cancel-waiting')).toMatchObject({ awaitingInput: false });
    // The status query changed, not the commands: the history replays on the current code.
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: WORKFLOW_BUNDLE } },
      await handle.fetchHistory(),
      sagaWorkflowId('cancel-waiting'),
    );
  });
});
