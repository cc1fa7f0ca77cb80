/**
 * A stand-in for the saga workflow around the implementation phase, for the fleet-decision tests on the
 * time-skipping test server (test/integration/workflows/fleet/fleet-decisions*.test.ts). It starts `implementationWorkflow`
 * as its child, the way the saga does, and is the address the fleet's questions go to: it takes the
 * opened-interaction signal, answers by the real `respond` update (forwarded to the asking workflow as the
 * answered signal) and keeps the log lines its children send. It knows the fleet only by the workflow type
 * name and the messages contract (src/domain/saga/messages.ts).
 */
import { defineQuery, executeChild, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ProgressEvent } from '../../../src/domain/contract/state';
import { installStandInHub, type HubView } from './stand-in-hub';

// The workflows the fleet starts, registered in the same bundle under their own type names.
export { implementationWorkflow, taskWorkflow } from '../../../src/workflows';

/** What the parent has seen: every interaction opened (in order), the answers given, the log lines. */
export interface FleetParentView extends HubView {
  log: string[];
}

export const fleetParentViewQuery = defineQuery<FleetParentView>('fleetParentView');

/** Runs the implementation phase as a child with `input` (its ctx.sagaWorkflowId is this workflow's id). */
export async function fleetParentWorkflow(input: unknown): Promise<unknown> {
  const view: FleetParentView = { opened: [], pending: [], answers: [], log: [] };
  setHandler(fleetParentViewQuery, () => view);
  const post = (event: ProgressEvent) => {
    if (event.type === 'log') view.log.push(event.line);
  };
  installStandInHub(view, post);
  const result = await executeChild('implementationWorkflow', {
    workflowId: `${workflowInfo().workflowId}-implementation`,
    args: [input],
  });
  return result;
}
