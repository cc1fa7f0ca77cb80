/**
 * Rules for answering interactions, shared by the saga workflow's update validator and the chat bridge,
 * so a bad answer is refused the same way everywhere and never enters history.
 */
import { budgetRaiseProblem } from '../fleet/budget';
import { specEditProblem } from '../fleet/spec-edit';
import { checkCommand, parseIssueLines } from '../planning/acceptance-issues';
import type { Answer, Interaction, RespondInput, TextFormat } from '../contract/state';

export type RespondErrorType =
  'UnknownInteraction' | 'AlreadyAnswered' | 'InvalidChoice' | 'TextRequired' | 'InvalidText';

export class RespondError extends Error {
  constructor(
    readonly type: RespondErrorType,
    message: string,
  ) {
    super(message);
    this.name = type;
  }
}

/** The key of an option written as "[A] Review": lets users answer "A". */
const optionKey = (option: string): string | undefined =>
  /^\[([A-Za-z0-9])\]/.exec(option)?.[1]?.toLowerCase();

/** Accepts the option text (any case), its 1-based number, or its [X] key. */
export function matchChoice(interaction: Interaction, choice: string): { index: number; option: string } {
  const wanted = choice.trim().toLowerCase();
  const options = interaction.options;
  let index = options.findIndex((o) => o.toLowerCase() === wanted);
  if (index < 0 && /^\d+$/.test(wanted)) {
    const n = Number(wanted);
    if (n >= 1 && n <= options.length) index = n - 1;
  }
  if (index < 0) index = options.findIndex((o) => optionKey(o) === wanted);
  if (index < 0) {
    const list = options.map((o, i) => `${i + 1}) ${o}`).join(', ');
    throw new RespondError(
      'InvalidChoice',
      `'${choice}' is not an option of interaction '${interaction.id}'. Choose one of: ${list}.`,
    );
  }
  return { index, option: options[index]! };
}

export function validateResponse(
  pending: Interaction | undefined,
  alreadyAnswered: boolean,
  input: RespondInput,
): { index: number; option: string } {
  if (!pending) {
    if (alreadyAnswered) {
      throw new RespondError('AlreadyAnswered', `Interaction '${input.interactionId}' was already answered.`);
    }
    throw new RespondError(
      'UnknownInteraction',
      `This saga has no pending interaction '${input.interactionId}'.`,
    );
  }
  const match = matchChoice(pending, input.choice);
  if (pending.textRequiredFor.includes(match.option) && !input.text?.trim()) {
    throw new RespondError('TextRequired', `Choice '${match.option}' needs a note: pass --text "...".`);
  }
  if (pending.textFormat && pending.textRequiredFor.includes(match.option)) {
    const problem = textFormatProblem(pending.textFormat, input.text);
    if (problem) throw new RespondError('InvalidText', problem);
  }
  return match;
}

/** Why `text` does not fit `format` (the answer text an interaction asks for), or null. */
export function textFormatProblem(format: TextFormat, text: string | undefined): string | null {
  if (format === 'budget-amount') return budgetRaiseProblem(text);
  if (format === 'spec-edit') return specEditProblem(text);
  const parsed = format === 'acceptance-issues' ? parseIssueLines(text) : checkCommand(text);
  return parsed.ok ? null : parsed.error;
}

export function toAnswer(input: RespondInput, match: { index: number; option: string }, at: string): Answer {
  return {
    interactionId: input.interactionId,
    choice: match.option,
    choiceIndex: match.index,
    ...(input.text?.trim() ? { text: input.text.trim() } : {}),
    user: input.user ?? 'cli',
    answeredAt: at,
  };
}

/** The decisions.md entry that records an answer (written by the saga's projector, once per answer). */
export function answerDecisionEntry(answer: Answer): { at: string; title: string; lines: string[] } {
  return {
    at: answer.answeredAt,
    title: `${answer.user} answered ${answer.interactionId}: ${answer.choice}`,
    lines: [
      `- Answered by ${answer.user}; recorded in the saga's workflow history (respond update).`,
      ...(answer.text ? [`- Note: ${answer.text}`] : []),
    ],
  };
}

/**
 * Answers a saga carries into its next run: the newest ANSWERS_CARRIED, enough to send a retried child the
 * answer it already got; older ones stay in decisions.md and the earlier runs' histories.
 */
export const ANSWERS_CARRIED = 200;
export const carriedAnswers = (answers: readonly Answer[]): Answer[] => answers.slice(-ANSWERS_CARRIED);
