/**
 * The part of a stand-in saga (fleet-parent.ts, delivery-parent.ts) that stands for the saga's interaction
 * hub and progress: questions its children open are kept and answered by the real `respond` update (sent on
 * as the answered signal), and every progress event they send is handed to `onEvent`. Called at the top of
 * the parent's workflow function, before its first await, like a real handler block.
 */
import { getExternalWorkflowHandle, setHandler } from '@temporalio/workflow';
import {
  interactionAnsweredSignal,
  interactionOpenedSignal,
  progressBatchSignal,
  progressSignal,
  respondUpdate,
} from '../../../src/domain/saga/messages';
import type { Answer, Interaction, ProgressEvent } from '../../../src/domain/contract/state';

/** What a stand-in saga has seen of its children's questions. */
export interface HubView {
  opened: Interaction[];
  pending: Interaction[];
  answers: Answer[];
}

export function installStandInHub(view: HubView, onEvent: (event: ProgressEvent) => void): void {
  setHandler(interactionOpenedSignal, (...opened: Interaction[]) => {
    view.opened.push(...opened);
    view.pending.push(...opened);
  });
  setHandler(progressSignal, onEvent);
  setHandler(progressBatchSignal, (events) => events.forEach(onEvent));
  setHandler(
    respondUpdate,
    async (respond) => {
      const at = view.pending.findIndex((i) => i.id === respond.interactionId);
      const interaction = view.pending.splice(at, 1)[0]!;
      const answer: Answer = {
        interactionId: interaction.id,
        choice: respond.choice,
        choiceIndex: interaction.options.indexOf(respond.choice),
        ...(respond.text !== undefined ? { text: respond.text } : {}),
        user: respond.user ?? 'tester',
        answeredAt: new Date().toISOString(),
      };
      view.answers.push(answer);
      await getExternalWorkflowHandle(interaction.owner).signal(interactionAnsweredSignal, answer);
      return answer;
    },
    {
      validator: (respond) => {
        if (!view.pending.some((i) => i.id === respond.interactionId))
          throw new Error(`no pending interaction ${respond.interactionId}`);
      },
    },
  );
}
