/**
 * The saga's projection (PROGRESS.md and the spec tree) from the saga's own queries: the workflow passes only
 * its id, so the (growing) status and the plan never travel through history as an activity input. Uses the
 * worker's client from the activity context.
 */
import { Context } from '@temporalio/activity';
import { carryQuery, statusQuery } from '../workflows/definitions';
import type { createArtifactActivities } from './artifacts';

type Artifacts = ReturnType<typeof createArtifactActivities>;

export function createProgressActivities(deps: { artifacts: Artifacts }) {
  return {
    async writeProgressSnapshot(input: {
      sagaDir: string;
      workflowId: string;
      runId: string;
    }): Promise<{ path: string }> {
      const handle = Context.current().client.workflow.getHandle(input.workflowId, input.runId);
      const status = await handle.query(statusQuery);
      // The approved plan (with any acceptance milestones) and environment; null before approval.
      const carry = await handle.query(carryQuery).catch(() => null);
      return deps.artifacts.writeProgress({
        sagaDir: input.sagaDir,
        status,
        ...(carry ? { plan: carry.plan, environment: carry.environment } : {}),
      });
    },
  };
}
