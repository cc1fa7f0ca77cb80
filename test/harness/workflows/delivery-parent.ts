/**
 * A stand-in for the saga workflow around the delivery watch, for the delivery-decision tests on the
 * time-skipping test server (test/integration/workflows/delivery/delivery-decisions.test.ts). It starts the
 * real `deliveryWorkflow` as its child, the way acceptance does, keeps what the watch tells the saga (log
 * lines, every `pullRequest` event), is the address the watch's questions go to (answered by the real
 * `respond` update) and, on a schedule of workflow time, wakes the watch (forgeEvent) or stops it
 * (deliveryStop) as `saga chat serve` and the user's answer do. It knows the watch only by the workflow type
 * name and the messages contract (src/domain/saga/messages.ts).
 */
import { defineQuery, setHandler, sleep, startChild, workflowInfo } from '@temporalio/workflow';
import type { ProgressEvent, PullRequestStatus } from '../../../src/domain/contract/state';
import { deliveryStopSignal, forgeEventSignal } from '../../../src/domain/saga/messages';
import { installStandInHub, type HubView } from './stand-in-hub';

// The workflows the watch starts, registered in the same bundle under their own type names.
export { deliveryWorkflow, taskWorkflow } from '../../../src/workflows';

/** What the parent has seen: interactions opened and answered, log lines, every PR status sent. */
export interface DeliveryParentView extends HubView {
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
  const post = (event: ProgressEvent) => {
    if (event.type === 'log') view.log.push(event.line);
    if (event.type === 'pullRequest') view.pullRequests.push(event.pullRequest);
  };
  installStandInHub(view, post);
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
