/**
 * A stand-in for the saga workflow around the delivery watch, for the delivery-decision tests on the
 * time-skipping test server (test/integration/workflows/delivery/delivery-decisions.test.ts). It starts the
 * real `deliveryWorkflow` as its child, the way acceptance does, keeps what the watch tells the saga (log
 * lines, every `pullRequest` event), is the address the watch's questions go to (answered by the real
 * `respond` update) and, on a schedule of workflow time, wakes the watch (forgeEvent) or stops it
 * (deliveryStop) as `saga chat serve` and the user's answer do. It knows the watch only by the workflow type
 * name and the messages contract (src/domain/saga/messages.ts).
 */
import {
  defineQuery,
  getExternalWorkflowHandle,
  setHandler,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  deliveryStopSignal,
  forgeEventSignal,
  interactionAnsweredSignal,
  interactionOpenedSignal,
  progressBatchSignal,
  progressSignal,
  respondUpdate,
} from '../../../src/domain/saga/messages';
import type {
  Answer,
  Interaction,
  ProgressEvent,
  PullRequestStatus,
} from '../../../src/domain/contract/state';

// The workflows the watch starts, registered in the same bundle under their own type names.
export { deliveryWorkflow, taskWorkflow } from '../../../src/workflows';

/** What the parent has seen: interactions opened and answered, log lines, every PR status sent. */
export interface DeliveryParentView {
  opened: Interaction[];
  pending: Interaction[];
  answers: Answer[];
  log: string[];
  pullRequests: PullRequestStatus[];
}

export const deliveryParentViewQuery = defineQuery<DeliveryParentView>('deliveryParentView');

/** What the parent does to the watch at `atMs` of workflow time after starting it. */
export interface ScheduledSignal {
  atMs: number;
  signal: 'forgeEvent' | 'stop';
}

export interface DeliveryParentInput {
  /** The watch's input (DeliveryInput plus bodies); its ctx.sagaWorkflowId is this workflow's id. */
  delivery: unknown;
  schedule: ScheduledSignal[];
}

export const deliveryChildId = (parentId: string): string => `${parentId}-delivery`;

export async function deliveryParentWorkflow(input: DeliveryParentInput): Promise<unknown> {
  const view: DeliveryParentView = { opened: [], pending: [], answers: [], log: [], pullRequests: [] };
  setHandler(deliveryParentViewQuery, () => view);
  setHandler(interactionOpenedSignal, (...opened: Interaction[]) => {
    view.opened.push(...opened);
    view.pending.push(...opened);
  });
  const post = (event: ProgressEvent) => {
    if (event.type === 'log') view.log.push(event.line);
    if (event.type === 'pullRequest') view.pullRequests.push(event.pullRequest);
  };
  setHandler(progressSignal, post);
  setHandler(progressBatchSignal, (events) => events.forEach(post));
  setHandler(
    respondUpdate,
    async (respond) => {
      const at = view.pending.findIndex((i) => i.id === respond.interactionId);
      const interaction = view.pending.splice(at, 1)[0]!;
      const answer: Answer = {
        interactionId: interaction.id,
        choice: respond.choice,
        choiceIndex: interaction.options.indexOf(respond.choice),
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
  const watch = await startChild('deliveryWorkflow', {
    workflowId: deliveryChildId(workflowInfo().workflowId),
    args: [input.delivery],
  });
  const signals = (async () => {
    let now = 0;
    for (const { atMs, signal } of [...input.schedule].sort((a, b) => a.atMs - b.atMs)) {
      if (atMs > now) await sleep(atMs - now);
      now = Math.max(now, atMs);
      if (signal === 'stop') await watch.signal(deliveryStopSignal);
      else await watch.signal(forgeEventSignal, { kind: 'ci', head: null, sha: null });
    }
  })();
  const result = await watch.result();
  // A schedule past the watch's end has nothing left to signal.
  void signals.catch(() => undefined);
  return result;
}
