/**
 * Quality-locked reviews inside the workflows (the execution modes, docs/PROCEDURE.md §8), against the real server with scripted
 * planner and reviewer runs of the demo agent: REVISE loops back to the author with the findings, the
 * history goes to manifest.md, CAP_REACHED and ESCALATE wait for the user with their option sets, and with
 * --autonomous as well the [A] Review checkpoint is auto-picked while exceptions and acceptance still wait.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { ManifestFront } from '../../../../src/domain/record/manifest';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import {
  majors,
  type ModesSaga,
  oneTaskPlan,
  runContext,
  startModesSaga,
} from '../../../harness/modes-helpers';

const history = (m: ManifestFront) => m.quality_locked_history.map((h) => [h.subject, h.iteration, h.result]);
const counts = (major: number) => ({ critical: 0, major, substantive: 0, cosmetic: 0 });

describe('quality-locked mode', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('modes-quality');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('--quality-locked alone: the user picks [A] Review; REVISE loops back; inline reviews are self-reviews', async () => {
    const saga = await startModesSaga(env, {
      name: 'mq-revise',
      args: '--quality-locked Add a greeting',
      script: {
        planner: { problem: 'Greet people.', questions: [], plan: oneTaskPlan() },
        reviewer: { plan: [majors(1, 'plan gap')] },
      },
    });
    // Without --autonomous the user picks at the normal checkpoint.
    const checkpoint = await waitForPending(env, saga.name, 'plan-approval-review');
    expect(checkpoint.pending[0]).toMatchObject({
      kind: 'checkpoint',
      options: ['[A] Review', '[S] Skip review', '[R] Revise', '[N] New session'],
    });
    await saga.answer('plan-approval-review', '[A] Review');

    await waitForPending(env, saga.name, 'plan-approval-1');
    // The planner revised with the reviewer's findings, and the reviewer saw the revised plan.
    expect(String(runContext(saga.sagaDir, 'planner-revise-1-r1-1-a1').note)).toContain('- plan gap 1');
    const manifest = saga.manifest();
    expect(manifest).toMatchObject({ execution_mode: 'inline', parallel_mode: 'sequential' });
    expect(manifest.auto_picked_checkpoints).toEqual([]);
    expect(manifest.quality_locked_history).toEqual([
      expect.objectContaining({
        subject: 'plan-plan',
        phase: 'planning',
        iteration: 1,
        result: 'REVISE',
        counts: counts(1),
      }),
      expect.objectContaining({
        subject: 'plan-plan',
        phase: 'planning',
        iteration: 2,
        result: 'PASS',
        counts: counts(0),
      }),
    ]);
    expect(readFileSync(manifest.quality_locked_history[0]!.findings!, 'utf8')).toContain('- plan gap 1');

    // Inline: the one agent session of the saga reviews its own work, and the run says so.
    const reviewers = saga.runs().filter((r) => r.role === 'reviewer');
    expect(reviewers.map((r) => [r.stage, r.reviewMode, r.session])).toEqual([
      ['plan', 'self-review', `${saga.name}-inline`],
      ['plan', 'self-review', `${saga.name}-inline`],
    ]);
    expect(runContext(saga.sagaDir, 'self-review-plan-plan-i2').reviewMode).toBe('self-review');
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('CAP_REACHED after 10 iterations waits with [F]/[R]/[E]/[A]; [F] is recorded', async () => {
    const alternating = Array.from({ length: 10 }, (_, i) => majors(1 + (i % 2)));
    const saga = await startModesSaga(env, {
      name: 'mq-cap',
      args: '--quality-locked Add a greeting',
      plan: oneTaskPlan(),
      script: { reviewer: { plan: alternating } },
    });
    await waitForPending(env, saga.name, 'plan-approval-review');
    await saga.answer('plan-approval-review', '[A] Review');

    const capped = await waitForPending(env, saga.name, 'plan-plan-cap-10', 60_000);
    expect(capped.pending).toEqual([
      expect.objectContaining({
        id: 'plan-plan-cap-10',
        kind: 'checkpoint',
        options: ['[F] Force', '[R] Revise manually', '[E] Escalate', '[A] Abort'],
        recommended: null,
      }),
    ]);
    const manifest = saga.manifest();
    expect(history(manifest)).toEqual([
      ...Array.from({ length: 9 }, (_, i) => ['plan-plan', i + 1, 'REVISE']),
      ['plan-plan', 10, 'CAP_REACHED'],
    ]);
    expect(saga.runs().filter((r) => r.role === 'reviewer')).toHaveLength(10);

    await saga.answer('plan-plan-cap-10', '[F] Force');
    await waitForPending(env, saga.name, 'plan-approval-1');
    expect(saga.decisions()[0]).toMatchObject({
      title: 'Quality-locked cap reached at plan-plan: [F] Force',
      lines: ['Decided by tester at iteration 10.'],
    });
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('both modes: [A] Review is auto-picked, but a stuck review (ESCALATE) still waits with [E]/[C]/[R]', async () => {
    const same = majors(2, 'same problem');
    const saga = await startModesSaga(env, {
      name: 'mq-stuck',
      args: '--autonomous --quality-locked Add a greeting',
      plan: oneTaskPlan(),
      script: { reviewer: { plan: [same, same, same, same] } },
    });
    const stuck = await waitForPending(env, saga.name, 'plan-plan-stuck-4', 60_000);
    expect(stuck.pending).toEqual([
      expect.objectContaining({
        id: 'plan-plan-stuck-4',
        kind: 'checkpoint',
        options: ['[E] Escalate', '[C] Continue', '[R] Revise manually'],
        recommended: null,
      }),
    ]);
    expect(history(saga.manifest())).toEqual([
      ['plan-plan', 1, 'REVISE'],
      ['plan-plan', 2, 'REVISE'],
      ['plan-plan', 3, 'REVISE'],
      ['plan-plan', 4, 'ESCALATE'],
    ]);

    // [C] Continue hands the findings back to the author and reviews again.
    await saga.answer('plan-plan-stuck-4', '[C] Continue');
    await waitForPending(env, saga.name, 'plan-approval-1');
    expect(String(runContext(saga.sagaDir, 'planner-revise-1-r4-1-a1').note)).toContain('- same problem 2');
    const manifest = saga.manifest();
    expect(history(manifest).slice(4)).toEqual([['plan-plan', 5, 'PASS']]);
    expect(manifest.auto_picked_checkpoints).toEqual([
      expect.objectContaining({ phase: 'planning', checkpoint: 'plan-approval', decision: 'A' }),
    ]);
    expect(saga.decisions().map((d) => d.title)).toEqual([
      'Quality-locked stuck at plan-plan: [C] Continue',
      'Auto-pick: [A] Review at plan-approval checkpoint',
    ]);
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('both modes (quality_locked from config) with --subagents: auto-pick before the review, fresh reviewers, questions and acceptance wait', async () => {
    const saga = await startModesSaga(env, {
      name: 'mq-both',
      args: '--autonomous --subagents Add a greeting',
      sageConfig: 'quality_locked: true\n',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [
            {
              question: 'Greeting punctuation',
              choice: 'Hello, NAME!',
              citation: 'default — no signal',
              confident: false,
              substantive: true,
            },
          ],
          plan: oneTaskPlan(),
        },
        reviewer: { plan: [majors(1)], task: [majors(1, 'edge case')] },
      },
    });
    // An unconfident substantive decision is an exception: asked, never auto-picked.
    await waitForPending(env, saga.name, 'q1-d1');
    await saga.answer('q1-d1', 'Hello, NAME!');

    const atApproval = await waitForPending(env, saga.name, 'plan-approval-1');
    expect(atApproval.pending.map((p) => p.id)).toEqual(['plan-approval-1']);
    expect(atApproval.log.some((l) => l.includes('plan-approval-review'))).toBe(false);

    const manifest = saga.manifest();
    expect(manifest.auto_picked_checkpoints).toEqual([
      {
        phase: 'planning',
        checkpoint: 'plan-approval',
        decision: 'A',
        timestamp: expect.any(String),
        reason: '--autonomous --quality-locked both active',
        flag_sources: { quality_locked: 'config', autonomous: 'flag' },
      },
    ]);
    expect(history(manifest)).toEqual([
      ['plan-plan', 1, 'REVISE'],
      ['plan-plan', 2, 'PASS'],
    ]);
    // Written before the review ran: the auto-pick is older than the first review iteration.
    const pickedAt = Date.parse(manifest.auto_picked_checkpoints[0]!.timestamp);
    expect(pickedAt).toBeLessThanOrEqual(Date.parse(String(manifest.quality_locked_history[0]!.timestamp)));
    const autoPick = saga.decisions().find((d) => d.title.startsWith('Auto-pick'));
    expect(autoPick?.lines).toEqual([
      'Flags active: --quality-locked (config), --autonomous (flag)',
      'Effect: Triggered quality-locked review loop (results in manifest under quality_locked_history).',
      'Override: pass --no-quality-locked to opt out of the .sage/config.yaml default for one run; omit --autonomous to disable the flag.',
    ]);
    expect(manifest.autonomous_decisions).toEqual([{ phase: 'planning', decided: 0, asked: 1, sources: {} }]);

    // Both modes do not approve the plan or accept the result for the user.
    await saga.answer('plan-approval-1', 'approve');
    const atAcceptance = await waitForPending(env, saga.name, 'acceptance-1', 60_000);
    expect(atAcceptance.pending.map((p) => p.kind)).toEqual(['acceptance']);
    expect(atAcceptance.milestones[0]!.tasks[0]).toMatchObject({
      id: '1.1',
      status: 'integrated',
      attempts: 2,
    });
    // The task result was reviewed too (no checkpoint for task results); REVISE sent the findings back.
    expect(saga.manifest().quality_locked_history.slice(2)).toEqual([
      expect.objectContaining({
        subject: 'task-1-1',
        phase: 'implementation',
        iteration: 1,
        result: 'REVISE',
      }),
      expect.objectContaining({ subject: 'task-1-1', phase: 'implementation', iteration: 2, result: 'PASS' }),
    ]);
    const runs = saga.runs();
    const implementer = runs.filter((r) => r.role === 'implementer');
    expect(implementer.map((r) => r.attempt)).toEqual(['1', '2']);
    expect(JSON.stringify(runContext(saga.sagaDir, runLabel(saga, /^m1t1-d1-a2$/)).notes)).toContain(
      'edge case 1',
    );

    // Subagents: every review is its own fresh session, never the implementer's.
    const reviewers = runs.filter((r) => r.role === 'reviewer');
    expect(reviewers.map((r) => [r.stage, r.reviewMode])).toEqual([
      ['plan', 'fresh-session'],
      ['plan', 'fresh-session'],
      ['task', 'fresh-session'],
      ['task', 'fresh-session'],
    ]);
    expect(new Set(reviewers.map((r) => r.session)).size).toBe(4);
    const implementerPids = new Set(implementer.map((r) => r.pid));
    expect(reviewers.some((r) => implementerPids.has(r.pid))).toBe(false);
    expect(runContext(saga.sagaDir, 'review-task-1-1-i1').reviewMode).toBe('fresh-session');
    await saga.answer('acceptance-1', 'accept');
    expect((await env.client.workflow.getHandle(sagaWorkflowId(saga.name)).result()).phase).toBe('complete');
  });

  test('a task whose failed revision is fixed by the next one passes, once; every task review is in the manifest', async () => {
    const greetTest = `const test = require('node:test');\nconst assert = require('node:assert');\nconst { greet } = require('../src/greet');\ntest('greets by name', () => assert.strictEqual(greet('Ada'), 'Hello, Ada!'));\n`;
    const greet = (body: string) => ({
      files: {
        'src/greet.js': `module.exports = { greet: (name) => ${body} };\n`,
        'test/greet.test.js': greetTest,
      },
    });
    const saga = await startModesSaga(env, {
      name: 'mq-task-status',
      args: '--autonomous --quality-locked Add a greeting',
      plan: oneTaskPlan(),
      script: {
        // Passes, then a revision that breaks the check, then one that fixes it.
        tasks: {
          '1.1': {
            attempts: [greet('`Hello, ${name}!`'), greet("'Hello ' + name"), greet('`Hello, ${name}!`')],
          },
        },
        reviewer: { task: [majors(1, 'first'), majors(1, 'second')] },
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    const atAcceptance = await waitForPending(env, saga.name, 'acceptance-1', 60_000);
    // The last attempt passed: the task is not reported blocked, nor delegated again.
    expect(atAcceptance.milestones[0]!.tasks[0]).toMatchObject({
      id: '1.1',
      status: 'integrated',
      attempts: 3,
      delegations: 1,
    });
    expect(saga.runs().filter((r) => r.role === 'implementer')).toHaveLength(3);
    // Every iteration of the task's review, the failed revision's included, named by its delegation.
    const taskReviews = saga.manifest().quality_locked_history.filter((h) => h.subject === 'task-1-1');
    expect(taskReviews.map((h) => [h.checkpoint, h.phase, h.iteration, h.result, h.counts.major])).toEqual([
      ['task-m1t1-d1', 'implementation', 1, 'REVISE', 1],
      ['task-m1t1-d1', 'implementation', 2, 'REVISE', 1],
      ['task-m1t1-d1', 'implementation', 3, 'PASS', 0],
    ]);
    expect(readFileSync(taskReviews[1]!.findings!, 'utf8')).toContain('- second 1');
    await saga.answer('acceptance-1', 'accept');
    expect((await env.client.workflow.getHandle(sagaWorkflowId(saga.name)).result()).phase).toBe('complete');
  });
});

/** The one run folder whose label matches. */
function runLabel(saga: ModesSaga, pattern: RegExp): string {
  const found = readdirSync(path.join(saga.sagaDir, 'runs')).filter((name) => pattern.test(name));
  expect(found).toHaveLength(1);
  return found[0]!;
}
