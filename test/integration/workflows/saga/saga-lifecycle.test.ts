/**
 * A whole saga against the real server, real git and the demo agent as a real process:
 * intake → planning (with --plan) → approval → fleet with a task that fails once → integration →
 * exit criteria → report issues → a focused round → accept.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

describe('saga lifecycle', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('lifecycle');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('plan file saga runs to acceptance through a report round', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'), { failFirstAttempt: true });
    const input = await prepareSaga({
      repo,
      argumentsText: '--subagents --parallel=2 Add a greeting',
      plan: GREETING_PLAN_FILE,
      name: 'lifecycle',
    });
    await startSaga(env.client, input);
    const name = input.name;

    // Nothing exists on disk before the name is confirmed.
    await waitForPending(env, name, 'confirm-name');
    expect(existsSync(input.sagaDir)).toBe(false);
    await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });

    const atApproval = await waitForPending(env, name, 'plan-approval-1');
    expect(atApproval.executionMode).toBe('subagents; parallel (2 lanes)');
    expect(readFileSync(path.join(input.sagaDir, 'SAGA.md'), 'utf8')).toContain('Core library');
    expect(existsSync(path.join(input.sagaDir, 'milestones', '01-core', 'tasks', '01-add-greet.md'))).toBe(
      true,
    );
    await respond(env.client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });

    const atAcceptance = await waitForPending(env, name, 'acceptance-1', 120_000);
    expect(atAcceptance.phase).toBe('acceptance');
    const tasks = atAcceptance.milestones.flatMap((m) => m.tasks);
    expect(tasks.map((t) => [t.id, t.status])).toEqual([
      ['1.1', 'integrated'],
      ['1.2', 'integrated'],
      ['2.1', 'integrated'],
    ]);
    // 1.1 failed its first validation and passed on the second attempt.
    expect(tasks[0]!.attempts).toBe(2);
    // Every task commit is in the integration branch; no saga worktree is left.
    for (const t of tasks) {
      expect(t.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(() =>
        git(repo, 'merge-base', '--is-ancestor', t.commit!, 'saga/lifecycle/integration'),
      ).not.toThrow();
    }
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    const report = readFileSync(path.join(input.sagaDir, 'REPORT.md'), 'utf8');
    expect(report).toMatch(/E1/);
    expect(report).toMatch(/passed/);

    // A report round: one issue becomes a task in a new milestone, validated by its check and the exit criteria.
    await respond(env.client, name, {
      interactionId: 'acceptance-1',
      choice: 'report issues',
      text: 'The README should show how to run the CLI :: check: grep -q "node bin/greet.js" README.md',
      user: 'test',
    });
    const round2 = await waitForPending(env, name, 'acceptance-2', 120_000);
    expect(round2.round).toBe(2);
    expect(round2.milestones).toHaveLength(3);
    expect(round2.milestones[2]!.tasks[0]!.status).toBe('integrated');

    await respond(env.client, name, { interactionId: 'acceptance-2', choice: 'accept', user: 'test' });
    const done = await env.client.workflow.getHandle(sagaWorkflowId(name)).result();
    expect(done.phase).toBe('complete');
    const final = await waitForStatus(env, name, (s) => s.phase === 'complete');
    expect(final.pending).toEqual([]);
    expect(readFileSync(path.join(input.sagaDir, 'PROGRESS.md'), 'utf8')).toContain('complete');
  }, 400_000);

  test('an answer sent right after start is accepted (the name question is open from the first moment)', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'quick'));
    const input = await prepareSaga({
      repo,
      argumentsText: 'Add a greeting',
      plan: GREETING_PLAN_FILE,
      name: 'quick-answer',
    });
    await startSaga(env.client, input);
    const answer = await respond(env.client, 'quick-answer', {
      interactionId: 'confirm-name',
      choice: 'cancel',
      user: 'test',
    });
    expect(answer.choice).toBe('cancel');
    const done = await env.client.workflow.getHandle(sagaWorkflowId('quick-answer')).result();
    expect(done.phase).toBe('cancelled');
    expect(existsSync(input.sagaDir)).toBe(false);
  });
});
