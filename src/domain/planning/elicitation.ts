/**
 * Closing ambiguity with the planner (docs/PROCEDURE.md §2.4, §9), as pure functions: which of an autonomous
 * planner's decisions stand and which are asked back, what a user's reply records, the note when autonomy
 * proves insufficient, and the plan approval question. Pure: also runs in workflow code.
 */
import type { Answer, InteractionRequest } from '../contract/state';
import type { AdoptedDefault } from './autonomous-decisions';
import { correctableDecisionLines, type CorrectableDecision, type parseDecisionCorrections } from './memory';
import { AUTONOMY_INSUFFICIENT_NOTE, type PlannerDecision, type PlannerQuestion } from './planner';
import { PLAN_APPROVAL_CHOICE } from '../contract/answer-choices';

/** A planner question with the user's answer, as the planner is told it in its next runs. */
export interface PlannerAnswer {
  question: string;
  answer: string;
  text?: string;
}

/** The decisions of a round not decided or asked before (a planner may repeat earlier ones each round). */
export function freshDecisions(
  proposed: PlannerDecision[],
  decided: PlannerDecision[],
  answers: PlannerAnswer[],
): PlannerDecision[] {
  const known = new Set([...decided.map((d) => d.question), ...answers.map((a) => a.question)]);
  return proposed.filter((d) => !known.has(d.question));
}

/**
 * Confident or minor decisions stand; an unconfident substantive one is asked back (an exception
 * checkpoint, never picked automatically).
 */
export function triageDecisions(resolved: PlannerDecision[]): {
  decided: PlannerDecision[];
  unconfident: PlannerDecision[];
} {
  const unconfident = resolved.filter((d) => !d.confident && d.substantive);
  return { decided: resolved.filter((d) => !unconfident.includes(d)), unconfident };
}

/** What a reply records: the choice, or with [D] the planner's recommended option, adopted as a project decision. */
export function replyToQuestion(
  question: PlannerQuestion,
  reply: Answer,
): { answer: PlannerAnswer; adopted: AdoptedDefault | null } {
  const adopted =
    reply.choice === '[D] default'
      ? { question: question.text, choice: question.options[question.recommended ?? 0]! }
      : null;
  const answer = adopted ? adopted.choice : reply.choice;
  return {
    answer: { question: question.text, answer, ...(reply.text ? { text: reply.text } : {}) },
    adopted,
  };
}

/** decisions.md's entry when every substantive decision of a round needed asking (planning goes interactive). */
export function autonomyInsufficientEntry(
  askedSubstantive: number,
  round: number,
  at: string,
): { at: string; title: string; lines: string[] } {
  return {
    at,
    title: AUTONOMY_INSUFFICIENT_NOTE,
    lines: [
      `- All ${askedSubstantive} substantive decision(s) of round ${round} needed asking; ` +
        'none could be decided from memory, codebase, principles or prior decisions.',
      '- The questions are asked as in interactive mode (no [D] default); the final approval is yours as always.',
    ],
  };
}

/** The approval question of a plan version; `review`: what the quality-locked review says and recommends. */
export function planApprovalRequest(
  version: number,
  specPath: string,
  review: { note: string | null; recommended: number | null },
  costEstimate: string | null,
  correctable: CorrectableDecision[],
): InteractionRequest {
  return {
    id: `plan-approval-${version}`,
    kind: 'plan-approval',
    prompt: [
      `Approve the plan (version ${version}) written to ${specPath}?`,
      ...(review.note ? [review.note] : []),
      ...(costEstimate ? [costEstimate] : []),
      ...correctableDecisionLines(correctable),
    ].join('\n'),
    options: [PLAN_APPROVAL_CHOICE.approve, PLAN_APPROVAL_CHOICE.revise, PLAN_APPROVAL_CHOICE.reject],
    recommended: review.recommended,
    textRequiredFor: [PLAN_APPROVAL_CHOICE.revise],
  };
}

/** The log line of the user's corrections of autonomous decisions (a learning for the repo's next sagas). */
export const correctionsLine = (
  corrections: ReturnType<typeof parseDecisionCorrections>['corrections'],
): string =>
  `[LRN:correction] ${corrections.map((c) => `D${c.number} ${c.decision.question} → ${c.correction}`).join('; ')}`;
