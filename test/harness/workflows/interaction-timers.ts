/**
 * A workflow around the saga's own InteractionEffects (src/workflows/saga/interaction-effects.ts): it opens the
 * interactions it is given (each at its offset of workflow time; some answered at once) and waits until all are answered, so the
 * time-skipping test drives the real reminder and chat-recheck timers through hours of workflow time.
 */
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';
import type { Interaction } from '../../../src/domain/contract/state';
import { InteractionEffects } from '../../../src/workflows/saga/interaction-effects';

export const answerSignal = defineSignal<[string]>('answer');

export interface InteractionTimersInput {
  hostQueue: string;
  /** Interaction ids, each opened `afterMs` after the previous one. */
  open: { id: string; afterMs: number; answerAtOnce?: boolean }[];
}

const interaction = (id: string): Interaction => ({
  id,
  kind: 'plan-approval',
  prompt: `Approve ${id}?`,
  options: ['approve', 'revise'],
  recommended: 0,
  textRequiredFor: [],
  owner: 'probe',
  openedAt: new Date().toISOString(),
});

export async function interactionTimersWorkflow(input: InteractionTimersInput): Promise<void> {
  const pending: Interaction[] = [];
  const effects = new InteractionEffects({
    saga: 'probe',
    sagaDir: '/nonexistent',
    hostQueue: input.hostQueue,
    uiUrl: () => 'http://ui.invalid',
    pending: () => pending,
  });
  const answer = (id: string) => {
    const at = pending.findIndex((i) => i.id === id);
    if (at < 0) return;
    pending.splice(at, 1);
    effects.answered({
      interactionId: id,
      choice: 'approve',
      choiceIndex: 0,
      user: 'tester',
      answeredAt: new Date().toISOString(),
    });
  };
  setHandler(answerSignal, answer);
  void effects.run();
  for (const { id, afterMs, answerAtOnce } of input.open) {
    if (afterMs > 0) await sleep(afterMs);
    const opened = interaction(id);
    pending.push(opened);
    effects.opened(opened);
    // As a saga `saga watch` started answers confirm-name: in the workflow task that opened it.
    if (answerAtOnce) answer(id);
  }
  await condition(() => pending.length === 0);
  await effects.settled();
}
