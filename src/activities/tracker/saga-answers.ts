/**
 * What the tracker workflows ask of Temporal itself (docs/PROCEDURE.md §14), through the worker's client:
 * - `answerFromIssue`: a reply on the issue answers through the SAME validated respond Update as
 *   `saga respond`; what the Update's validator refuses (a wrong option, already answered) comes back as
 *   `ok: false` with its message, for the issue sync to post as a reply, not as a failed activity.
 * - `runningSagas`: which of the watch's sagas still run (`max_sagas`).
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import { RespondInputSchema, type Answer, type RespondInput } from '../../domain/contract/state';
import { respondUpdate } from '../../domain/saga/messages';
import { parseInput } from '../git-ops/schemas';

const AnswerInputSchema = z.object({ sagaWorkflowId: z.string().min(1), response: RespondInputSchema });
const RunningInputSchema = z.object({ workflowIds: z.array(z.string().min(1)).max(500) });

export type AnswerFromIssueResult = { ok: true; answer: Answer } | { ok: false; error: string };

export function createSagaAnswerActivities() {
  return {
    async answerFromIssue(input: {
      sagaWorkflowId: string;
      response: RespondInput;
    }): Promise<AnswerFromIssueResult> {
      const { sagaWorkflowId, response } = parseInput('answerFromIssue', AnswerInputSchema, input);
      const handle = Context.current().client.workflow.getHandle(sagaWorkflowId);
      try {
        const answer = await handle.executeUpdate(respondUpdate, { args: [response] });
        return { ok: true, answer };
      } catch (error) {
        // Refused by the Update's validator (or its handler): the user's mistake, said on the issue.
        if (error instanceof WorkflowUpdateFailedError)
          return { ok: false, error: error.cause?.message ?? error.message };
        if (error instanceof WorkflowNotFoundError)
          return { ok: false, error: 'The saga is not running any more.' };
        throw error;
      }
    },

    /** The ids among `workflowIds` whose workflow is running now (an unknown id is not running). */
    async runningSagas(input: { workflowIds: string[] }): Promise<string[]> {
      const { workflowIds } = parseInput('runningSagas', RunningInputSchema, input);
      const client = Context.current().client;
      const running: string[] = [];
      for (const id of workflowIds) {
        try {
          const { status } = await client.workflow.getHandle(id).describe();
          if (status.name === 'RUNNING') running.push(id);
        } catch (error) {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }
      }
      return running;
    },
  };
}

export type SagaAnswerActivities = ReturnType<typeof createSagaAnswerActivities>;
