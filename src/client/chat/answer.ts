/**
 * One answer from chat, checked and delivered to the saga's `respond` update. Every refusal carries the HTTP
 * status the README documents (section "Chat") and a reason a person can act on; a refusal changes nothing (the update's validator
 * rejects before anything reaches history).
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import type { Answer } from '../../domain/contract/state';
import { UserError } from '../errors';
import { respond, RespondRefused } from '../saga-client';
import type { Approvers } from '../../chat/allowlist';

export const ChatAnswerSchema = z.object({
  saga: z.string().min(1),
  interaction: z.string().min(1),
  choice: z.string().min(1),
  text: z.string().max(20_000).optional(),
  user: z.string().min(1),
});
export type ChatAnswer = z.infer<typeof ChatAnswerSchema>;

export type AnswerOutcome =
  | { ok: true; answer: Answer }
  | { ok: false; status: 400 | 403 | 404 | 409 | 502; refusal: string; reason: string };

const REFUSAL_STATUS: Record<string, 400 | 404 | 409> = {
  UnknownInteraction: 404,
  AlreadyAnswered: 409,
  InvalidChoice: 400,
  TextRequired: 400,
  InvalidRequest: 400,
};

/**
 * `recordedAs` is the author written to history (e.g. `slack:U123`); the allowlist is checked against the
 * bare `answer.user`.
 */
export async function deliverChatAnswer(
  client: Client,
  approvers: Approvers,
  answer: ChatAnswer,
  recordedAs: string,
): Promise<AnswerOutcome> {
  if (!approvers.mayAnswer(answer.saga, answer.user)) {
    return {
      ok: false,
      status: 403,
      refusal: 'NotAllowed',
      reason: `User '${answer.user}' is not allowed to answer saga '${answer.saga}' (not in SAGA_APPROVERS).`,
    };
  }
  try {
    const delivered = await respond(client, answer.saga, {
      interactionId: answer.interaction,
      choice: answer.choice,
      ...(answer.text !== undefined ? { text: answer.text } : {}),
      user: recordedAs,
    });
    return { ok: true, answer: delivered };
  } catch (error) {
    if (error instanceof RespondRefused) {
      return {
        ok: false,
        status: REFUSAL_STATUS[error.type] ?? 400,
        refusal: error.type,
        reason: error.message,
      };
    }
    // UserError from the client: no saga by that name; WorkflowNotFoundError: it has ended.
    if (error instanceof UserError)
      return { ok: false, status: 404, refusal: 'UnknownSaga', reason: error.message };
    if (error instanceof WorkflowNotFoundError) {
      return {
        ok: false,
        status: 404,
        refusal: 'UnknownSaga',
        reason: `Saga '${answer.saga}' is not running any more; nothing waits for an answer.`,
      };
    }
    return {
      ok: false,
      status: 502,
      refusal: 'Unavailable',
      reason: `The saga could not be reached: ${(error as Error).message}`,
    };
  }
}
