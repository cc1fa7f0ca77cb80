/**
 * An integrated milestone's task states, written to its record file before they leave the carried state
 * (domain/saga/milestone-records.ts). The implementation workflow passes only its id: the activity reads
 * the states through the workflow's progress query, so a milestone of any size never travels through
 * history as an activity input.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MilestoneRecord } from '../../domain/saga/milestone-records';
import { milestoneRecordFile } from '../../domain/contract/saga-dir';
import { implementationProgressQuery } from '../../domain/saga/messages';
import type { SagaFiles } from './saga-files';

export interface RecordMilestoneInput {
  sagaDir: string;
  /** The implementation workflow that integrated the milestone (it waits for this activity). */
  workflowId: string;
  runId: string;
  milestone: number;
}

export async function recordMilestone(
  files: SagaFiles,
  input: RecordMilestoneInput,
): Promise<{ file: string; tasks: number }> {
  const handle = Context.current().client.workflow.getHandle(input.workflowId, input.runId);
  const live = await handle.query(implementationProgressQuery);
  const m = live.milestones.find((x) => x.id === input.milestone);
  if (!m || m.status !== 'integrated' || m.record)
    throw ApplicationFailure.nonRetryable(
      `Milestone ${input.milestone} of ${input.workflowId} is ${m ? (m.record ? 'recorded already' : m.status) : 'not there'}: only an integrated milestone's tasks are recorded, once.`,
    );
  const record: MilestoneRecord = { milestone: m.id, tasks: m.tasks };
  const file = await files.write(input.sagaDir, milestoneRecordFile(m.id), `${JSON.stringify(record)}\n`);
  return { file, tasks: m.tasks.length };
}
