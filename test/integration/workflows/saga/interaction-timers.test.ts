/**
 * The saga's timer-driven behaviour around questions, on Temporal's time-skipping test server: hours of
 * workflow time pass in about a second, so the schedule itself is checked (the end-to-end chat tests only
 * see that a reminder comes). The workflow is the saga's own InteractionEffects in a small wrapper
 * (test/harness/workflows/interaction-timers.ts); the activities stand in for the chat notify activities and
 * record when, in workflow time, each notification was sent.
 */
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { CHAT_RECHECK_MS } from '../../../../src/workflows/saga/interaction-effects';
import { createTimeSkippingEnv } from '../../../harness/time-skipping';
import { answerSignal, interactionTimersWorkflow } from '../../../harness/workflows/interaction-timers';

const HOUR = 3_600_000;
const QUEUE = 'interaction-timers';

interface Sent {
  id: string;
  reminder: number;
  /** Workflow time since the workflow started. */
  afterMs: number;
}

describe('question timers (time-skipping test server)', () => {
  let env: TestWorkflowEnvironment;
  let workflowBundle: { code: string };
  let sent: Sent[];
  let answered: string[];
  /** What the stand-in notify activity answers: how often to remind, or null (nowhere to notify). */
  let chat: { remindAfterMs: number | null; maxReminders?: number };
  let startedAt: number;

  beforeAll(async () => {
    env = await createTimeSkippingEnv();
    workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../../harness/workflows/interaction-timers'),
      logger: new DefaultLogger('WARN'),
    });
  }, 120_000);
  afterAll(async () => env?.teardown());

  beforeEach(() => {
    sent = [];
    answered = [];
  });

  /** Runs the workflow: opens `open`, lets `waitMs` of workflow time pass, answers everything, ends. */
  async function run(
    open: { id: string; afterMs: number; answerAtOnce?: boolean }[],
    waitMs: number,
  ): Promise<void> {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: QUEUE,
      workflowBundle,
      activities: {
        notifyInteraction: async (input: { interaction: { id: string }; reminder: number }) => {
          const at = Context.current().info.currentAttemptScheduledTimestampMs;
          sent.push({ id: input.interaction.id, reminder: input.reminder, afterMs: at - startedAt });
          return chat;
        },
        notifyAnswered: async (input: { interactionId: string }) => {
          answered.push(input.interactionId);
          return { updated: 1 };
        },
      },
    });
    await worker.runUntil(async () => {
      startedAt = (await env.currentTimeMs()) as number;
      const handle = await env.client.workflow.start(interactionTimersWorkflow, {
        taskQueue: QUEUE,
        workflowId: `timers-${Date.now()}`,
        args: [{ hostQueue: QUEUE, open }],
      });
      await env.sleep(waitMs);
      for (const { id, answerAtOnce } of open) if (!answerAtOnce) await handle.signal(answerSignal, id);
      await handle.result();
    });
  }

  test('an unanswered question is reminded after 1, 3 and 7 hours (each wait doubles), then no more', async () => {
    chat = { remindAfterMs: HOUR, maxReminders: 3 };
    await run([{ id: 'plan-approval-1', afterMs: 0 }], 30 * HOUR);
    expect(sent.map((s) => s.reminder)).toEqual([0, 1, 2, 3]);
    const hours = sent.map((s) => Math.round(s.afterMs / HOUR));
    expect(hours).toEqual([0, 1, 3, 7]);
    expect(answered).toEqual(['plan-approval-1']);
  });

  test('a question answered before its first reminder is not reminded', async () => {
    chat = { remindAfterMs: HOUR, maxReminders: 3 };
    await run([{ id: 'plan-approval-1', afterMs: 0 }], HOUR / 2);
    expect(sent.map((s) => s.reminder)).toEqual([0]);
    expect(answered).toEqual(['plan-approval-1']);
  });

  test('a host without chat is asked again only after the recheck interval', async () => {
    chat = { remindAfterMs: null };
    const minutes = CHAT_RECHECK_MS / 60_000;
    await run(
      [
        { id: 'q-1', afterMs: 0 },
        { id: 'q-2', afterMs: (minutes / 2) * 60_000 },
        { id: 'q-3', afterMs: (minutes / 2 + 1) * 60_000 },
      ],
      CHAT_RECHECK_MS + 2 * 60_000,
    );
    // q-2 opened within the interval: the saga does not ask the host (no activity); q-3 after it: asked.
    expect(sent.map((s) => s.id)).toEqual(['q-1', 'q-3']);
    // No chat was told of q-2, so its answer updates nothing; q-1 and q-3 went to the host (which had no chat).
    expect(answered).toEqual([]);
  });

  test('a question answered in the workflow task that opened it gets no chat notice nor update', async () => {
    chat = { remindAfterMs: HOUR, maxReminders: 3 };
    await run(
      [
        { id: 'confirm-name', afterMs: 0, answerAtOnce: true },
        { id: 'plan-approval-1', afterMs: 0 },
        { id: 'plan-approval-2', afterMs: HOUR / 4, answerAtOnce: true },
      ],
      HOUR / 2,
    );
    // Only the question left open was sent (and updated when answered); none was reminded.
    expect(sent.map((s) => s.id)).toEqual(['plan-approval-1']);
    expect(answered).toEqual(['plan-approval-1']);
  });
});
