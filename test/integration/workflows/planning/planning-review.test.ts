/**
 * The plan's approval checkpoint under --quality-locked (docs/PROCEDURE.md §2.8), against the real
 * server with the demo agent as planner and reviewer: [A] Review / [S] Skip review / [R] Revise / [N] New
 * session; an escalated review is honoured at the approval; MILESTONE.md and the task specs carry the
 * rationale block of --autonomous, as SAGA.md does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createInProcessSagaEnv,
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

const sagaMd = (saga: ModesSaga) => readFileSync(path.join(saga.sagaDir, 'SAGA.md'), 'utf8');

describe('plan review checkpoints', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('planning-review');
  });
  afterAll(async () => env.close());

  test('the checkpoint offers [A]/[S]/[R]/[N]: [R] revises with your note, [N] drafts afresh, each asked again', async () => {
    const saga = await startModesSaga(env, {
      name: 'pr-checkpoint',
      args: '--quality-locked Add a greeting',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          plan: { ...oneTaskPlan(), problem: 'First draft.' },
          revise: { ...oneTaskPlan(), problem: 'Revised with the note.' },
        },
      },
    });
    const first = await waitForPending(env, saga.name, 'plan-approval-review');
    expect(first.pending[0]).toMatchObject({
      kind: 'checkpoint',
      options: ['[A] Review', '[S] Skip review', '[R] Revise', '[N] New session'],
      recommended: 0,
    });
    await saga.answer('plan-approval-review', '[R] Revise', 'Say hello in French');
    await waitForPending(env, saga.name, 'plan-approval-review-2');
    expect(runContext(saga.sagaDir, 'planner-revise-1-c1-1-a1').note).toBe('Say hello in French');
    expect(sagaMd(saga)).toContain('Revised with the note.');

    await saga.answer('plan-approval-review-2', '[N] New session');
    await waitForPending(env, saga.name, 'plan-approval-review-3');
    // A fresh planner session drafts it again (criteria, then decomposition), without the revised plan.
    expect(
      saga
        .runs()
        .filter((r) => r.role === 'planner')
        .map((r) => r.stage),
    ).toEqual(['questions', 'criteria', 'plan', 'revise', 'criteria', 'plan']);
    expect(runContext(saga.sagaDir, 'planner-plan-1-n2-1-a1').plan).toBeUndefined();
    expect(sagaMd(saga)).toContain('First draft.');

    await saga.answer('plan-approval-review-3', '[A] Review');
    const approval = await waitForPending(env, saga.name, 'plan-approval-1');
    expect(approval.pending[0]!.recommended).toBe(0);
    expect(saga.runs().filter((r) => r.role === 'reviewer')).toHaveLength(1);
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('[E] Escalate at a stuck review: the approval says the plan did not pass and recommends nothing', async () => {
    const same = majors(2, 'same problem');
    const saga = await startModesSaga(env, {
      name: 'pr-escalate',
      args: '--quality-locked Add a greeting',
      plan: oneTaskPlan(),
      script: { reviewer: { plan: [same, same, same, same] } },
    });
    await waitForPending(env, saga.name, 'plan-approval-review');
    await saga.answer('plan-approval-review', '[A] Review');
    await waitForPending(env, saga.name, 'plan-plan-stuck-4', 60_000);
    await saga.answer('plan-plan-stuck-4', '[E] Escalate');
    const approval = await waitForPending(env, saga.name, 'plan-approval-1');
    expect(approval.pending[0]!.recommended).toBeNull();
    expect(approval.pending[0]!.prompt).toContain(
      'The quality-locked review was escalated to you ([E] Escalate): this plan did not pass review.',
    );
    expect(saga.decisions()[0]!.title).toBe('Quality-locked stuck at plan-plan: [E] Escalate');
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('--autonomous: MILESTONE.md and every task spec carry the rationale block, as SAGA.md does', async () => {
    const saga = await startModesSaga(env, {
      name: 'pr-rationale',
      args: '--autonomous Add a greeting',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [
            {
              question: 'Module format',
              choice: 'CommonJS',
              citation: 'codebase: src/*.js use require',
              confident: true,
              substantive: true,
            },
          ],
          plan: oneTaskPlan(),
        },
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    const milestones = path.join(saga.sagaDir, 'milestones');
    const [dir] = readdirSync(milestones);
    const [task] = readdirSync(path.join(milestones, dir!, 'tasks'));
    for (const file of [path.join(dir!, 'MILESTONE.md'), path.join(dir!, 'tasks', task!)]) {
      const text = readFileSync(path.join(milestones, file), 'utf8');
      expect(text).toContain(
        '## Recommendation Rationale\n\nThis artifact was produced with `--autonomous`. Key decisions:\n\n' +
          '- **Module format:** CommonJS — codebase: src/*.js use require',
      );
      expect(text).toContain('**Decisions asked back to user:** None');
    }
    expect(sagaMd(saga)).toContain('- **Module format:** CommonJS — codebase: src/*.js use require');
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });
});
