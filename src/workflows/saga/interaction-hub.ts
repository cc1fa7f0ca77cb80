/**
 * The saga workflow's register of who it waits for. Children open interactions by signal (`open`); users
 * answer through the `respond` update, whose validator (`check`) refuses bad answers before they reach
 * history. The handlers are registered in sagaWorkflow's handler block (saga.ts).
 */
import { zodIssueLines } from '../../domain/text/zod-errors';
import { ApplicationFailure, condition, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { carriedAnswers, RespondError, toAnswer, validateResponse } from '../../domain/saga/interactions';
import {
  RespondInputSchema,
  type Answer,
  type Interaction,
  type RespondInput,
} from '../../domain/contract/state';
import { recordAnswer } from '../ask';
import { interactionAnsweredSignal } from '../../domain/saga/messages';

export interface HubSnapshot {
  pending: Interaction[];
  answered: Answer[];
}

export class InteractionHub {
  private readonly pending = new Map<string, Interaction>();
  private readonly answered = new Map<string, Answer>();
  /** Answers still on their way to the workflow that asked. */
  private deliveries = 0;

  constructor(
    snapshot: HubSnapshot | undefined,
    private readonly onChange: (event: { opened?: Interaction; answered?: Answer }) => void,
  ) {
    for (const i of snapshot?.pending ?? []) this.pending.set(i.id, i);
    for (const a of snapshot?.answered ?? []) this.answered.set(a.interactionId, a);
  }

  /** Registers an interaction; re-opening one that was answered re-sends its answer (idempotent for retried children). */
  open(interaction: Interaction): void {
    const done = this.answered.get(interaction.id);
    if (done) {
      this.deliver(interaction.owner, done);
      return;
    }
    if (this.pending.has(interaction.id)) return;
    this.pending.set(interaction.id, interaction);
    this.onChange({ opened: interaction });
  }

  /** Drops pending interactions of a workflow that ended (e.g. a cancelled task). */
  closeOwnedBy(owner: string): void {
    for (const [id, i] of this.pending) if (i.owner === owner) this.pending.delete(id);
  }

  list(): Interaction[] {
    return [...this.pending.values()];
  }

  /** Resolves once every answer has reached the workflow that asked (before the saga ends or continues as new). */
  delivered(): Promise<void> {
    return condition(() => this.deliveries === 0);
  }

  /** What the next run starts from (answers oldest first, the newest of them: see carriedAnswers). */
  snapshot(): HubSnapshot {
    return { pending: this.list(), answered: carriedAnswers([...this.answered.values()]) };
  }

  /** The `respond` update's validator: throws when the answer does not fit a pending interaction. */
  check(raw: RespondInput): { index: number; option: string } {
    const parsed = RespondInputSchema.safeParse(raw);
    if (!parsed.success) {
      throw ApplicationFailure.create({
        type: 'InvalidRequest',
        message: `Invalid answer: ${zodIssueLines(parsed.error, '').join('; ')}`,
        nonRetryable: true,
      });
    }
    const input = parsed.data;
    try {
      return validateResponse(
        this.pending.get(input.interactionId),
        this.answered.has(input.interactionId),
        input,
      );
    } catch (error) {
      if (error instanceof RespondError) {
        throw ApplicationFailure.create({ type: error.type, message: error.message, nonRetryable: true });
      }
      throw error;
    }
  }

  /**
   * Records the answer and returns it at once: the caller sees it recorded in this workflow task, while the
   * signal to the asking workflow goes out beside it (not a second round trip before `saga respond` returns).
   */
  respond(raw: RespondInput): Answer {
    const match = this.check(raw);
    const input = RespondInputSchema.parse(raw);
    const interaction = this.pending.get(input.interactionId)!;
    const answer = toAnswer(input, match, new Date().toISOString());
    this.pending.delete(interaction.id);
    this.answered.set(interaction.id, answer);
    this.onChange({ answered: answer });
    this.deliver(interaction.owner, answer);
    return answer;
  }

  private deliver(owner: string, answer: Answer): void {
    if (owner === workflowInfo().workflowId) {
      recordAnswer(answer);
      return;
    }
    this.deliveries++;
    getExternalWorkflowHandle(owner)
      .signal(interactionAnsweredSignal, answer)
      // The asking workflow has ended (cancelled or replaced); the answer stays recorded here.
      .catch(() => undefined)
      .finally(() => this.deliveries--);
  }
}
