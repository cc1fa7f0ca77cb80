/**
 * One worker task (docs/PROCEDURE.md §3.3-§3.9) as a child workflow against the real server: real git repos, the demo agent
 * as a real process, real checks. Each test starts `taskWorkflow` directly with a saga context whose
 * saga workflow does not exist (progress signals are best effort).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo, greetingPlan } from '../../../../src/demo/sample-repo';
import { taskWorkflowId } from '../../../../src/domain/contract/naming';
import { PlanSchema } from '../../../../src/domain/plan';
import type { SagaContext } from '../../../../src/domain/saga/saga-input';
import { taskWorkflow, type TaskInput, type TaskReport } from '../../../../src/workflows/task/task';
import { standaloneTaskInput } from '../../../harness/task-input';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

const GREET_OK = `'use strict';\nmodule.exports = { greet: (name = 'world') => \`Hello, \${name}!\` };\n`;
const GREET_BUGGY = `'use strict';\nmodule.exports = { greet: (name) => 'Hello ' + name };\n`;
const GREET_TEST = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;
const ok = { files: { 'src/greet.js': GREET_OK, 'test/greet.test.js': GREET_TEST } };
const buggy = { files: { 'src/greet.js': GREET_BUGGY, 'test/greet.test.js': GREET_TEST } };

/** A process that is gone, or a zombie nobody reaped (it runs no code any more). */
function processGone(pid: number): boolean {
  const stat = (() => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return null;
    }
  })();
  if (stat === null) return true;
  return ['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
}

const demoLog = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { taskId: string; attempt: number; pid: number })
    : [];

describe('task workflow', () => {
  let env: SagaTestEnv;

  beforeAll(async () => {
    env = await createSagaTestEnv('taskwk');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  /** The sample repo with its own demo script for task 1.1 and its own saga.config.yaml, committed. */
  function makeRepo(label: string, attempts: unknown[], config: string, more: Record<string, unknown> = {}) {
    const repo = createSampleRepo(path.join(env.tmp(label), 'greeting'), {
      script: { tasks: { '1.1': { attempts }, ...more } },
    });
    writeFileSync(path.join(repo, 'saga.config.yaml'), `default_agent: demo\n${config}`);
    writeFileSync(path.join(repo, '.gitignore'), '.env\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'test config');
    writeFileSync(path.join(repo, '.env'), 'SECRET=42\n'); // git-ignored: only a copy can bring it along
    return repo;
  }

  async function runTask(
    repo: string,
    name: string,
    opts: { task?: number; agent?: string; portBase?: number } = {},
  ): Promise<{ report: TaskReport; input: TaskInput; ctx: SagaContext }> {
    const plan = PlanSchema.parse(greetingPlan());
    const taskNo = opts.task ?? 1;
    const planned = plan.milestones[0]!.tasks[taskNo - 1]!;
    const spec = { ...planned, ...(opts.agent ? { agent: opts.agent } : {}) };
    const input = await standaloneTaskInput(env, {
      name,
      repo,
      spec,
      goal: 'Add a greeting',
      task: taskNo,
      portBase: opts.portBase ?? 20_510,
    });
    const { ctx } = input;
    const handle = await env.client.workflow.start(taskWorkflow, {
      taskQueue: env.taskQueue,
      workflowId: taskWorkflowId(name, 1, taskNo),
      args: [input],
    });
    return { report: await handle.result(), input, ctx };
  }

  function expectHandedOff(repo: string, report: TaskReport, input: TaskInput, outcome: 'pass' | 'blocked') {
    expect(report.branch).toBe(input.branch);
    expect(git(repo, 'rev-parse', input.branch)).toBe(report.commit);
    expect(git(repo, 'log', '-1', '--format=%s', input.branch)).toContain(
      `saga(${input.ctx.name}): task ${input.ref} ${input.spec.slug} — ${outcome}`,
    );
    expect(existsSync(input.worktree)).toBe(false);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    expect(git(repo, 'status', '--porcelain')).toBe(''); // the main checkout is untouched
  }

  test('passes on the first attempt: set-up ran, .env copied, work committed, worktree removed', async () => {
    const repo = makeRepo(
      'pass',
      [ok],
      [
        'worktree:',
        '  copy: [.env]',
        `  setup: [["sh", "-c", "echo port=$SAGA_PORT_BASE env=$(cat .env)"]]`,
      ].join('\n'),
    );
    const { report, input, ctx } = await runTask(repo, 'tw-pass', { portBase: 20_730 });

    expect(report).toMatchObject({ status: 'passed', reason: null, attempts: 1 });
    expect(report.changedFiles.sort()).toEqual(['src/greet.js', 'test/greet.test.js']);
    expect(git(repo, 'show', `${report.commit}:src/greet.js`)).toBe(GREET_OK.trim());
    expect(report.usage).toEqual({ inputTokens: 1000, outputTokens: 200, costUsd: 0 });
    expect(report.evidence).toHaveLength(1);
    expect(readFileSync(report.evidence[0]!, 'utf8')).toContain('# pass 1');
    expectHandedOff(repo, report, input, 'pass');
    // The setup command ran in the new worktree, which had the git-ignored .env and its own port base.
    const setupDir = path.join(ctx.sagaDir, 'runs', 'setup');
    const logs = readdirSync(setupDir).map((f) => readFileSync(path.join(setupDir, f), 'utf8'));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('port=20730 env=SECRET=42');
    // The .env copy is not committed: it stays git-ignored.
    expect(report.changedFiles).not.toContain('.env');
  });

  test('fails then passes: the second prompt carries the first failure; history stays small', async () => {
    const repo = makeRepo('retry', [buggy, { ...ok, sleep_ms: 2500 }], '');
    const { report, input, ctx } = await runTask(repo, 'tw-retry');

    expect(report).toMatchObject({ status: 'passed', attempts: 2 });
    const runs = path.join(ctx.sagaDir, 'runs');
    const firstFailure = readFileSync(path.join(runs, 'm1t1-d1-a1-checks', 'check-1.log'), 'utf8');
    expect(firstFailure).toMatch(/Hello Ada/); // the buggy output the assertion printed
    const firstPrompt = readFileSync(path.join(runs, 'm1t1-d1-a1', 'prompt.md'), 'utf8');
    const secondPrompt = readFileSync(path.join(runs, 'm1t1-d1-a2', 'prompt.md'), 'utf8');
    expect(firstPrompt).not.toContain('## Attachments');
    expect(secondPrompt).toContain('## Attachments');
    expect(secondPrompt).toContain(firstFailure.trimEnd());
    expect(secondPrompt).toContain('Check failed: greet test passes');
    expect(report.usage.inputTokens).toBe(2000); // summed over both attempts
    expectHandedOff(repo, report, input, 'pass');

    // The agent ran for seconds (heartbeating), yet history holds only the activity summaries.
    expect(readFileSync(path.join(runs, 'm1t1-d1-a2', 'transcript.log'), 'utf8')).toContain(
      'working... 2400 ms',
    );
    const history = await env.client.workflow.getHandle(report.workflowId).fetchHistory();
    expect(history.events!.length).toBeLessThan(60);
  });

  test('always fails: blocked after the configured attempts, with evidence and the work committed', async () => {
    const repo = makeRepo('blocked', [buggy], 'attempts: 2\n');
    const { report, input } = await runTask(repo, 'tw-blocked');

    expect(report).toMatchObject({ status: 'blocked', attempts: 2 });
    expect(report.reason).toMatch(
      /^Check failed: greet test passes \(`node --test test\/greet.test.js`\) exit 1/,
    );
    expect(report.evidence.length).toBeGreaterThan(0);
    for (const file of report.evidence) {
      expect(readFileSync(file, 'utf8')).toMatch(/Hello Ada/);
    }
    // The partial result survives on the branch even though the task is blocked.
    expect(git(repo, 'show', `${report.commit}:src/greet.js`)).toBe(GREET_BUGGY.trim());
    expectHandedOff(repo, report, input, 'blocked');
  });

  test('a task budget stops further attempts: blocked (budget)', async () => {
    const costly = { ...buggy, usage: { input_tokens: 500, output_tokens: 50, cost_usd: 0.03 } };
    const log = path.join(env.tmp('budget-log'), 'demo.log');
    const repo = makeRepo(
      'budget',
      [costly],
      `attempts: 5\nbudget: { task_usd: 0.05 }\nagents:\n  demo:\n    env: { SAGA_DEMO_LOG: ${JSON.stringify(log)} }\n`,
    );
    const { report, input } = await runTask(repo, 'tw-budget');

    expect(report.status).toBe('blocked');
    expect(report.reason).toMatch(/^budget: task spent \$0\.06 of \$0\.05/);
    expect(report.attempts).toBe(2);
    expect(demoLog(log)).toHaveLength(2); // no third agent run
    expect(report.usage.costUsd).toBeCloseTo(0.06);
    expect(report.usage).toMatchObject({ inputTokens: 1000, outputTokens: 100 });
    expectHandedOff(repo, report, input, 'blocked');
  });

  test('hung agents are killed at the idle timeout and at the total timeout, process tree and all', async () => {
    const dir = env.tmp('hang');
    const log = path.join(dir, 'demo.log');
    const sleepers = path.join(dir, 'sleepers');
    const demo = ['{node}', '{saga_root}/agents/demo-agent.js'];
    // `slow` starts a grandchild (sleep) in the agent's process group, then becomes the demo agent.
    const wrapped = [
      '/bin/sh',
      '-c',
      'sleep 600 >/dev/null 2>&1 & echo $! >> "$SLEEPERS"; exec "$0" "$1"',
      ...demo,
    ];
    const repo = makeRepo(
      'hang',
      [{ files: { 'notes.txt': 'partial work\n' }, hang: true }],
      [
        'attempts: 1',
        // The process-group kill of unconfined runs; confined ones die with their PID namespace
        // (test/unit/activities/sandbox/sandbox.test.ts).
        'sandbox: none',
        'agents:',
        `  hang: { command: ${JSON.stringify(demo)}, idle_timeout: 2s, timeout: 1m, env: { SAGA_DEMO_LOG: ${JSON.stringify(log)} } }`,
        `  slow: { command: ${JSON.stringify(wrapped)}, idle_timeout: 1m, timeout: 3s, env: { SAGA_DEMO_LOG: ${JSON.stringify(log)}, SLEEPERS: ${JSON.stringify(sleepers)} } }`,
      ].join('\n'),
      // Task 1.2 prints progress all the time, so only the total timeout can stop it.
      { '1.2': { attempts: [{ files: { 'slow.txt': 'partial work\n' }, sleep_ms: 600_000 }] } },
    );
    const started = Date.now();
    const [idle, total] = await Promise.all([
      runTask(repo, 'tw-hang', { agent: 'hang' }),
      runTask(repo, 'tw-hang', { task: 2, agent: 'slow', portBase: 20_520 }),
    ]);
    expect(Date.now() - started).toBeLessThan(40_000);

    expect(idle.report).toMatchObject({ status: 'blocked', attempts: 1 });
    expect(idle.report.reason).toBe('agent printed nothing for too long (hung)');
    expect(readFileSync(idle.report.evidence[0]!, 'utf8')).toContain('hanging (demo script says so)');
    expect(total.report).toMatchObject({ status: 'blocked', attempts: 1, reason: 'agent timed out' });
    expect(readFileSync(total.report.evidence[0]!, 'utf8')).toContain('working...');

    const runs = demoLog(log);
    expect(runs.map((r) => r.taskId).sort()).toEqual(['1.1', '1.2']);
    const grandchildren = readFileSync(sleepers, 'utf8').trim().split('\n').map(Number);
    expect(grandchildren).toHaveLength(1);
    for (const pid of [...runs.map((r) => r.pid), ...grandchildren]) expect(processGone(pid)).toBe(true);
    expectHandedOff(repo, idle.report, idle.input, 'blocked');
    expectHandedOff(repo, total.report, total.input, 'blocked');
  });
});
