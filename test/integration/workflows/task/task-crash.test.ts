/**
 * A saga worker process SIGKILLed while the agent of a task runs: a new worker finishes the task, steps
 * that had completed are not redone, and nothing the killed worker started is left running. Killed during
 * the checks instead, the retried attempt resumes from its checkpoint: the agent does not run again.
 * The worker runs the current TypeScript sources in a separate Node process (swc require hook).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo, greetingPlan } from '../../../../src/demo/sample-repo';
import { taskWorkflowId } from '../../../../src/domain/contract/naming';
import { PlanSchema } from '../../../../src/domain/plan';
import { taskWorkflow } from '../../../../src/workflows/task/task';
import { standaloneTaskInput } from '../../../harness/task-input';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';
import { startWorkerProcess } from '../../../harness/ts-worker';
import { waitFor } from '../../../harness/wait';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

interface DemoRun {
  taskId: string;
  attempt: number;
  pid: number;
}
const readLines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
const demoRuns = (file: string) => readLines(file).map((l) => JSON.parse(l) as DemoRun);

function processGone(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true;
  }
  return ['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
}

describe('task workflow survives a worker crash', () => {
  let env: SagaTestEnv;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    env = await createSagaTestEnv('taskcrash');
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
    await env.close();
  });

  async function startWorker(dir: string, extraEnv: NodeJS.ProcessEnv): Promise<ChildProcess> {
    const child = await startWorkerProcess(dir, { ...env.cliEnv, ...extraEnv });
    workers.push(child);
    return child;
  }

  test('SIGKILL during the agent run: a new worker finishes; finished steps are not redone', async () => {
    const dir = env.tmp('crash');
    const demoLog = path.join(dir, 'demo.log');
    const sleepers = path.join(dir, 'sleepers');
    const setupRuns = path.join(dir, 'setup-runs');
    const plan = PlanSchema.parse(greetingPlan());
    const spec = plan.milestones[0]!.tasks[0]!;
    const greetOk = `'use strict';\nmodule.exports = { greet: (name) => \`Hello, \${name}!\` };\n`;
    const greetBuggy = `'use strict';\nmodule.exports = { greet: (name) => 'Hello ' + name };\n`;
    const greetTest = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), {
      script: {
        tasks: {
          '1.1': {
            attempts: [
              { files: { 'src/greet.js': greetBuggy, 'test/greet.test.js': greetTest } },
              { files: { 'src/greet.js': greetOk, 'test/greet.test.js': greetTest }, sleep_ms: 4000 },
            ],
          },
        },
      },
    });
    // The agent leaves a silent grandchild in its process group: it would outlive a killed worker.
    const command = [
      '/bin/sh',
      '-c',
      'sleep 600 >/dev/null 2>&1 & echo $! >> "$SLEEPERS"; exec "$0" "$1"',
      '{node}',
      '{saga_root}/agents/demo-agent.js',
    ];
    writeFileSync(
      path.join(repo, 'saga.config.yaml'),
      [
        'default_agent: crashy',
        // Longer than the test waits: the new worker retries the dead worker's attempt itself (its ledger).
        'heartbeat_timeout: 10m',
        // Unconfined: what a crash leaves running (an orphaned process group) is ended by the retry. Confined
        // runs die with their worker (bwrap --die-with-parent; test/unit/activities/sandbox/sandbox.test.ts).
        'sandbox: none',
        'agents:',
        `  crashy: { command: ${JSON.stringify(command)}, env: { SAGA_DEMO_LOG: ${JSON.stringify(demoLog)}, SLEEPERS: ${JSON.stringify(sleepers)} } }`,
        'worktree:',
        `  setup: [["sh", "-c", "echo ran >> \\"$0\\"", ${JSON.stringify(setupRuns)}]]`,
        '',
      ].join('\n'),
    );
    git(repo, 'commit', '-q', '-am', 'crash test config');

    const name = 'tc-crash';
    const input = await standaloneTaskInput(env, {
      name,
      repo,
      spec,
      goal: 'Add a greeting',
      portBase: 20_510,
    });

    const first = await startWorker(env.tmp('worker1'), {});
    const handle = await env.client.workflow.start(taskWorkflow, {
      taskQueue: env.taskQueue,
      workflowId: taskWorkflowId(name, 1, 1),
      args: [input],
    });
    // Attempt 2's agent is sleeping (it prints progress every 200 ms): kill the worker under it.
    await waitFor('attempt 2 of the agent to start', () => demoRuns(demoLog).some((r) => r.attempt === 2));
    await new Promise((r) => setTimeout(r, 800));
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const [interrupted] = demoRuns(demoLog).filter((r) => r.attempt === 2);
    const orphanedSleeper = Number(readLines(sleepers)[1]);
    expect(processGone(orphanedSleeper)).toBe(false); // the crash left it running...

    await startWorker(env.tmp('worker2'), {});
    const report = await handle.result();

    expect(report).toMatchObject({ status: 'passed', attempts: 2, reason: null });
    // The new worker failed the dead worker's attempt at its start (no 10-minute heartbeat wait).
    const retried = (await handle.fetchHistory()).events!.flatMap((e) => {
      const started = e.activityTaskStartedEventAttributes;
      return started && (started.attempt ?? 1) > 1 ? [started.lastFailure?.message ?? ''] : [];
    });
    expect(retried).toEqual([expect.stringMatching(/\(pid \d+\) is gone; retried at once by its successor/)]);
    // Attempt 1 (agent and checks) finished before the crash and ran once; attempt 2 ran again.
    const runs = demoRuns(demoLog);
    expect(runs.map((r) => r.attempt)).toEqual([1, 2, 2]);
    expect(readLines(setupRuns)).toEqual(['ran']); // worktree set-up was not redone
    // ...and the retry ended it before starting over; nothing else is left either.
    for (const pid of [...runs.map((r) => r.pid), ...readLines(sleepers).map(Number)]) {
      expect(processGone(pid)).toBe(true);
    }
    expect(processGone(interrupted!.pid)).toBe(true);
    // Durable handoff from the new worker.
    expect(git(repo, 'rev-parse', input.branch)).toBe(report.commit);
    expect(git(repo, 'show', `${report.commit}:src/greet.js`)).toBe(greetOk.trim());
    expect(existsSync(input.worktree)).toBe(false);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
  }, 90_000);
  test('SIGKILL during the checks: the retry resumes after the agent (it is not paid for twice)', async () => {
    const dir = env.tmp('crash-checks');
    const demoLog = path.join(dir, 'demo.log');
    const checkLog = path.join(dir, 'checks.log');
    const greetOk = `'use strict';\nmodule.exports = { greet: (name) => \`Hello, \${name}!\` };\n`;
    const repo = createSampleRepo(path.join(env.tmp('repo-checks'), 'greeting'), {
      script: { tasks: { '1.1': { attempts: [{ files: { 'src/greet.js': greetOk } }] } } },
    });
    writeFileSync(
      path.join(repo, 'saga.config.yaml'),
      [
        'default_agent: logged',
        'heartbeat_timeout: 3s',
        'attempts: 1',
        // The check logs to a file outside its checkout for the test to follow: unconfined.
        'sandbox: none',
        // Checks get only an allow-listed environment: the log path is passed on by name.
        'pass_env: [CHECK_LOG]',
        'agents:',
        `  logged: { command: ["{node}", "{saga_root}/agents/demo-agent.js"], env: { SAGA_DEMO_LOG: ${JSON.stringify(demoLog)} } }`,
        '',
      ].join('\n'),
    );
    git(repo, 'commit', '-q', '-am', 'checks crash config');
    const name = 'tc-checks';
    const plan = PlanSchema.parse(greetingPlan());
    const spec = {
      ...plan.milestones[0]!.tasks[0]!,
      // A slow check that says when it starts (CHECK_LOG comes from the worker's environment).
      validation: [
        { text: 'greet exists', check: 'echo started >> "$CHECK_LOG"; sleep 3; test -f src/greet.js' },
      ],
    };
    const input = await standaloneTaskInput(env, {
      name,
      repo,
      spec,
      goal: 'Add a greeting',
      portBase: 20_560,
    });
    // Only this test's workers may serve the queue (they carry CHECK_LOG).
    for (const w of workers.filter((w) => w.exitCode === null && w.signalCode === null)) {
      w.kill('SIGKILL');
      await new Promise((r) => w.once('exit', r));
    }
    const workerEnv = { CHECK_LOG: checkLog };
    const first = await startWorker(env.tmp('worker-checks-1'), workerEnv);
    const handle = await env.client.workflow.start(taskWorkflow, {
      taskQueue: env.taskQueue,
      workflowId: taskWorkflowId(name, 1, 1),
      args: [input],
    });
    await waitFor('the check to start', () => readLines(checkLog).length === 1);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    await startWorker(env.tmp('worker-checks-2'), workerEnv);
    const report = await handle.result();
    expect(report).toMatchObject({ status: 'passed', attempts: 1, reason: null });
    expect(demoRuns(demoLog).map((r) => r.attempt)).toEqual([1]); // the agent ran once
    expect(readLines(checkLog)).toEqual(['started', 'started']); // the checks ran again
    expect(git(repo, 'show', `${report.commit}:src/greet.js`)).toBe(greetOk.trim());
    expect(existsSync(input.worktree)).toBe(false);
  }, 90_000);
});
