/**
 * Every failure carries a one-line reason (the CLI contract, `error`), and the integration worktree is prepared
 * like a task's (`worktree.copy`, `setup`). Real server, real git, bin/saga and the demo agent.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { failureReason, FAILURE_REASON_MAX } from '../../../../src/domain/saga/failure';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { runSaga } from '../../../harness/cli';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

jest.setTimeout(180_000);

const MISSING_PLANNER = '/nonexistent/saga-missing-planner';
const MISSING_SETUP = '/nonexistent/saga-missing-setup-tool';

describe('failureReason', () => {
  test('the innermost message of the cause chain, on one line, capped', () => {
    const inner = new Error("agent x could not start: '/bin/nope'\n  spawn ENOENT");
    const activity = Object.assign(new Error('Activity task failed'), { cause: inner });
    const child = Object.assign(new Error('Child Workflow execution failed'), { cause: activity });
    expect(failureReason(child)).toBe("agent x could not start: '/bin/nope' spawn ENOENT");
    // An empty innermost message does not hide the one above it.
    expect(failureReason(Object.assign(new Error('outer'), { cause: new Error('') }))).toBe('outer');
    expect(failureReason('plain text')).toBe('plain text');
    const long = failureReason(new Error('x'.repeat(1000)));
    expect(long).toHaveLength(FAILURE_REASON_MAX);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('failure reasons and integration set-up', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('failure-reasons');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  const cli = async (args: string[]) => {
    const r = await runSaga(args, env.cliEnv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return r.stdout;
  };

  test('a saga whose planner cannot start says why: status --json error, status text, PROGRESS.md', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    // The user's own config declares the profile (a repository's may not set commands).
    mkdirSync(env.sagaHome, { recursive: true });
    writeFileSync(
      path.join(env.sagaHome, 'saga.config.yaml'),
      `agents:\n  broken:\n    command: ["${MISSING_PLANNER}"]\n`,
    );
    const name = 'no-planner';
    await cli([
      'start',
      '--repo',
      repo,
      '--name',
      name,
      '--agent',
      'broken',
      '--skip-agent-check',
      '--',
      'Greet',
    ]);
    await waitForPending(env, name, 'confirm-name');
    await cli(['respond', name, 'confirm-name', 'confirm']);
    await expect(env.client.workflow.getHandle(sagaWorkflowId(name)).result()).rejects.toThrow();

    // Read from the closed run (its history replayed on a worker).
    const status = JSON.parse(await cli(['status', name, '--json'])) as SagaStatus;
    expect(status.phase).toBe('failed');
    expect(status.error).toContain(MISSING_PLANNER);
    expect(status.error).toMatch(/^agent broken could not start/);
    expect(status.error).not.toContain('\n');
    expect(status.log[0]).toContain(`Failed: ${status.error}`);

    const text = await cli(['status', name]);
    expect(text).toContain(`Error: ${status.error}`);

    const progress = readFileSync(path.join(status.sagaDir, 'PROGRESS.md'), 'utf8');
    expect(progress).toContain(`Failed: ${status.error}`);
  });

  test('a terminated saga reads as failed, with the termination reason', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const name = 'stopped-by-hand';
    await cli(['start', '--repo', repo, '--name', name, '--', 'Greet']);
    await waitForPending(env, name, 'confirm-name');
    await env.client.workflow.getHandle(sagaWorkflowId(name)).terminate('operator pulled the plug');
    const status = JSON.parse(await cli(['status', name, '--json'])) as SagaStatus;
    expect(status).toMatchObject({ phase: 'failed', error: 'Terminated: operator pulled the plug' });
  });

  const plan = (milestoneCheck: string) => ({
    name: 'reasons',
    problem: 'One file written by one task.',
    scope: { in: ['a.txt'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'a.txt exists', check: 'test -f a.txt' }],
    milestones: [
      {
        id: 1,
        slug: 'only',
        title: 'Only milestone',
        depends_on: [],
        goal: 'a.txt.',
        validation: [{ text: 'milestone check', check: milestoneCheck }],
        tasks: [planTask(1, 'write-a', ['a.txt'], 'test -f a.txt')],
      },
    ],
  });
  const script = { tasks: { '1.1': { attempts: [{ files: { 'a.txt': 'a' } }] } } };

  test('a task child that fails escalates with its own reason, not "Child Workflow execution failed"', async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('setup-fails'), {
      plan: plan('test -f a.txt'),
      script,
      config: `worktree:\n  setup:\n    - ["${MISSING_SETUP}"]\n`,
    });
    const name = 'setup-fails';
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write a' });
    const asked = await waitForPending(env, name, 'esc-m1t1-d2', 120_000);
    const esc = asked.pending.find((p) => p.id === 'esc-m1t1-d2')!;
    expect(esc.prompt).toContain(MISSING_SETUP);
    expect(esc.prompt).toContain('could not start');
    expect(esc.prompt).not.toContain('Child Workflow execution failed');
    const task = asked.milestones[0]!.tasks[0]!;
    expect(task.reason).toContain(MISSING_SETUP);
    await cli(['respond', name, 'esc-m1t1-d2', 'abort']);
    await waitForStatus(env, name, (s) => s.phase === 'cancelled');
  });

  test('the integration worktree runs worktree.setup: a setup-dependent milestone check passes first time', async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('integration-setup'), {
      plan: plan('test -f deps.ok'),
      script,
      // What setup makes is ignored (like node_modules), so no task hands it on through its branch.
      files: { '.gitignore': 'deps.ok\n' },
      config: `worktree:\n  setup:\n    - ["node", "-e", "require('fs').writeFileSync('deps.ok', '1')"]\n`,
    });
    const name = 'integration-setup';
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write a' });
    const done = await waitForStatus(
      env,
      name,
      (s) => s.pending.some((p) => p.id === 'acceptance-1' || p.id.startsWith('esc-')),
      120_000,
    );
    expect(done.pending.map((p) => p.id)).toEqual(['acceptance-1']);
    expect(done.milestones[0]).toMatchObject({ status: 'integrated' });
    expect(done.milestones[0]!.tasks.map((t) => [t.id, t.status, t.delegations])).toEqual([
      ['1.1', 'integrated', 1],
    ]);
    expect(done.log.some((l) => l.includes('validation failed'))).toBe(false);
    // The setup ran in the integration worktree (its log beside the tasks' setup logs).
    expect(existsSync(path.join(done.sagaDir, 'runs', 'setup', 'integration-1.log'))).toBe(true);
    await cli(['respond', name, 'acceptance-1', 'accept']);
    await waitForStatus(env, name, (s) => s.phase === 'complete');
  });
});
