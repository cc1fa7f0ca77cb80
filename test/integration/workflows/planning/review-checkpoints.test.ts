/**
 * A task's quality-locked review checkpoints stop for the user's judgement (docs/PROCEDURE.md §8.3: cap-reached and stuck
 * checkpoints wait; Abort aborts, Escalate escalates): after [A] Abort or [E] Escalate no other agent run
 * of the task starts on its own (no re-delegation, no new review rounds). Real server, the demo agent.
 */
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { majors, oneTaskPlan, startModesSaga, type ModesSaga } from '../../../harness/modes-helpers';

describe('quality-locked task review checkpoints', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('review-checkpoints');
  });
  afterAll(async () => env.close());

  /** Starts a quality-locked saga of one task whose reviews follow `findings`, plan review skipped. */
  async function startReviewedTask(name: string, findings: string[]): Promise<ModesSaga> {
    const saga = await startModesSaga(env, {
      name,
      args: '--quality-locked Add a greeting',
      plan: oneTaskPlan(),
      script: { reviewer: { task: findings } },
    });
    await waitForPending(env, saga.name, 'plan-approval-review');
    await saga.answer('plan-approval-review', '[S] Skip review');
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    return saga;
  }
  const implementerRuns = (saga: ModesSaga) => saga.runs().filter((r) => r.role === 'implementer').length;

  test('[A] Abort at the cap-reached checkpoint stops the saga: no further agent run', async () => {
    const alternating = Array.from({ length: 10 }, (_, i) => majors(1 + (i % 2)));
    const saga = await startReviewedTask('rc-abort', alternating);
    const capped = await waitForPending(env, saga.name, 'task-1-1-cap-10', 120_000);
    const checkpoint = capped.pending.find((p) => p.id === 'task-1-1-cap-10')!;
    expect(checkpoint.options).toEqual(['[F] Force', '[R] Revise manually', '[E] Escalate', '[A] Abort']);
    // The prompt says what each answer does to the task.
    expect(checkpoint.prompt).toContain('[A] Abort stops the saga');
    const runsAtCheckpoint = saga.runs().length;
    expect(implementerRuns(saga)).toBe(10); // the first attempt and nine revisions

    await saga.answer('task-1-1-cap-10', '[A] Abort');
    const ended = await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled', 60_000);
    expect(ended.milestones[0]!.tasks[0]).toMatchObject({ id: '1.1', status: 'blocked', delegations: 1 });
    expect(ended.log.join('\n')).toContain('Task 1.1: its quality-locked review was aborted');
    expect(saga.runs()).toHaveLength(runsAtCheckpoint);
    expect(saga.decisions()[0]!.title).toBe('Quality-locked cap reached at task-1-1: [A] Abort');
  });

  test('[E] Escalate at a stuck checkpoint asks how to go on at once, without another delegation', async () => {
    const same = majors(2, 'same problem');
    const saga = await startReviewedTask('rc-escalate', [same, same, same, same]);
    await waitForPending(env, saga.name, 'task-1-1-stuck-4', 120_000);
    const runsAtCheckpoint = saga.runs().length;
    expect(implementerRuns(saga)).toBe(4);

    await saga.answer('task-1-1-stuck-4', '[E] Escalate');
    const escalated = await waitForPending(env, saga.name, 'esc-m1t1-d1', 60_000);
    const question = escalated.pending.find((p) => p.id === 'esc-m1t1-d1')!;
    expect(question).toMatchObject({ kind: 'escalation', options: ['retry', 'skip', 'edit', 'abort'] });
    expect(question.prompt).toContain('its quality-locked review was escalated to you');
    expect(escalated.milestones[0]!.tasks[0]).toMatchObject({ status: 'blocked', delegations: 1 });
    expect(saga.runs()).toHaveLength(runsAtCheckpoint);

    await saga.answer('esc-m1t1-d1', 'abort');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled', 60_000);
    expect(saga.runs()).toHaveLength(runsAtCheckpoint);
    await env.client.workflow.getHandle(sagaWorkflowId(saga.name)).result();
  });
});
