/**
 * PROGRESS.md from the saga's own status query: the workflow passes only its id, so the (growing) status
 * never travels through history as an activity input. Uses the worker's client from the activity context.
 */
import { Context } from '@temporalio/activity';
import { statusQuery } from '../workflows/definitions';
import type { createArtifactActivities } from './artifacts';

type Artifacts = ReturnType<typeof createArtifactActivities>;

export function createProgressActivities(deps: { artifacts: Artifacts }) {
  return {
    async writeProgressSnapshot(input: {
      sagaDir: string;
      workflowId: string;
      runId: string;
    }): Promise<{ path: string }> {
      const status = await Context.current()
        .client.workflow.getHandle(input.workflowId, input.runId)
        .query(statusQuery);
      return deps.artifacts.writeProgress({ sagaDir: input.sagaDir, status });
    },
  };
}
