/**
 * Asking a person from any saga workflow. The question is registered with the saga workflow (the one
 * address users answer at) and the answer comes back as a signal to the workflow that asked: each workflow
 * that asks lists `setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer))` in its handler
 * block, before its first await.
 */
import { condition, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import type { Answer, Interaction, InteractionRequest } from '../domain/contract/state';
import { interactionOpenedSignal } from '../domain/saga/messages';

const answers = new Map<string, Answer>();

/**
 * Records an answer to a question this workflow asked: the interactionAnswered signal's handler, and the
 * saga workflow answering its own questions in-process.
 */
export function recordAnswer(answer: Answer): void {
  answers.set(answer.interactionId, answer);
}

export function toInteraction(request: InteractionRequest): Interaction {
  return {
    ...request,
    textRequiredFor: request.textRequiredFor ?? [],
    owner: workflowInfo().workflowId,
    openedAt: new Date().toISOString(),
  };
}

/** Opens several interactions at once (a batch of questions) and waits for all of their answers. */
export async function askAll(
  sagaWorkflowId: string,
  requests: InteractionRequest[],
  open?: (interaction: Interaction) => void,
): Promise<Answer[]> {
  const interactions = requests.map(toInteraction);
  const unanswered = interactions.filter((i) => !answers.has(i.id));
  if (open) unanswered.forEach(open);
  // One signal for the batch: one workflow task in the saga, and the questions show together.
  else if (unanswered.length)
    await getExternalWorkflowHandle(sagaWorkflowId).signal(interactionOpenedSignal, ...unanswered);
  await condition(() => interactions.every((i) => answers.has(i.id)));
  return interactions.map((i) => answers.get(i.id)!);
}

export async function ask(
  sagaWorkflowId: string,
  request: InteractionRequest,
  open?: (interaction: Interaction) => void,
): Promise<Answer> {
  const [answer] = await askAll(sagaWorkflowId, [request], open);
  return answer!;
}
