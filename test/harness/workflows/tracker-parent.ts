/**
 * The workflows of the tracker tests on the time-skipping test server
 * (test/integration/workflows/tracker/): the real issue sync and watch, and two stand-ins for the saga.
 * - `issueSagaStandIn`: a saga from an issue as far as its issue is concerned. It uses the saga's real
 *   InteractionHub (the respond Update and its validator) and real IssueLink (the sync started as an
 *   abandoned child, the workpad updates and the pending questions sent in order): it asks its questions,
 *   waits for their answers, sends its phase updates and ends.
 * - `sagaWorkflow`: what the watch starts, under the saga's type name: it keeps its input and runs until
 *   the test signals `finishSaga`.
 */
import { condition, defineQuery, defineSignal, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { Answer, InteractionRequest } from '../../../src/domain/contract/state';
import { respondUpdate } from '../../../src/domain/saga/messages';
import type { IntakeSettings, SagaInput } from '../../../src/domain/saga/saga-input';
import type { WorkpadUpdate } from '../../../src/domain/tracker/workpad';
import { askAll } from '../../../src/workflows/ask';
import { InteractionHub } from '../../../src/workflows/saga/interaction-hub';
import { IssueLink } from '../../../src/workflows/saga/issue-link';

export { issueSyncWorkflow, trackerWatchWorkflow } from '../../../src/workflows';

export interface IssueSagaStandInInput {
  /** The saga's input as far as the link reads it (name, hostQueue, source). */
  saga: Pick<SagaInput, 'name' | 'hostQueue' | 'source'>;
  settings: IntakeSettings;
  questions: InteractionRequest[];
  /** Sent after the answers, all at once (the link sends them one at a time, in order). */
  updates: WorkpadUpdate[];
  /** Sent after the updates' wait (the end). */
  last: WorkpadUpdate;
  /** Workflow time between the updates and the last one. */
  waitMs?: number;
}

export async function issueSagaStandIn(
  input: IssueSagaStandInInput,
): Promise<{ answers: Answer[]; endedAtMs: number }> {
  const link: IssueLink = new IssueLink(input.saga as SagaInput, undefined, () => hub.list());
  const hub: InteractionHub = new InteractionHub(undefined, () => link.questionsChanged());
  setHandler(respondUpdate, (response) => hub.respond(response), {
    validator: (response) => void hub.check(response),
  });
  await link.start(input.settings, '');
  const answers = await askAll(workflowInfo().workflowId, input.questions, (i) => hub.open(i));
  for (const update of input.updates) link.send(update);
  if (input.waitMs) await sleep(input.waitMs);
  link.send(input.last);
  await link.settled();
  return { answers, endedAtMs: Date.now() };
}

export const finishSagaSignal = defineSignal('finishSaga');
export const sagaInputQuery = defineQuery<SagaInput>('standInSagaInput');

export async function sagaWorkflow(input: SagaInput): Promise<string> {
  let finished = false;
  setHandler(finishSagaSignal, () => {
    finished = true;
  });
  setHandler(sagaInputQuery, () => input);
  await condition(() => finished);
  return input.name;
}
