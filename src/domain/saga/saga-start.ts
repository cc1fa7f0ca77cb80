/**
 * How a saga workflow is started, in one place for both starters: `saga start` (the client) and `saga watch`
 * (the watch workflow, as a child). The id comes from the name, and a second start of the same id is
 * refused, which is what makes one saga per name, and one per issue.
 */
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { sagaWorkflowId } from '../contract/naming';
import { SagaAwaitingInput, SagaName, SagaPhase, SagaRepo } from '../contract/search-attributes';
import type { SagaInput } from './saga-input';

export const sagaStartOptions = (input: SagaInput) => ({
  workflowId: sagaWorkflowId(input.name),
  workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  args: [input] as [SagaInput],
  staticSummary: `Saga ${input.name}: ${input.goal}`.slice(0, 200),
  typedSearchAttributes: [
    { key: SagaName, value: input.name },
    { key: SagaPhase, value: 'planning' as string },
    { key: SagaRepo, value: input.repo },
    { key: SagaAwaitingInput, value: false },
  ],
});
