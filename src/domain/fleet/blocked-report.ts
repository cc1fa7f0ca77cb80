/**
 * An implementer's blocked report (templates/implementer.md, docs/PROCEDURE.md §3.9): the agent writes
 * `{"status": "blocked", "reason": "SPEC GAP: ..."}` to $SAGA_REPORT_FILE when it cannot finish. Pure.
 */
import type { Answer, InteractionRequest } from '../contract/state';
import { gapOptionsSentence, gapOptionText, type GapOptions } from './spec-gap-options';
import { SPEC_EDIT_HELP } from './spec-edit';

/** Longest agent reason kept: it goes to `saga status`, PROGRESS.md and the escalation prompt. */
export const BLOCKED_REASON_MAX = 300;

/** The agent's reason when its report says it is blocked, on one line and capped; null otherwise. */
export function agentBlockedReason(report: Record<string, unknown> | null | undefined): string | null {
  if (!report || report.status !== 'blocked') return null;
  const given = typeof report.reason === 'string' ? report.reason.replace(/\s+/g, ' ').trim() : '';
  const line = given || 'no reason given';
  return line.length <= BLOCKED_REASON_MAX ? line : `${line.slice(0, BLOCKED_REASON_MAX - 1)}…`;
}

/** The task's blocked reason when its agent reported blocked. */
export const agentBlockedTaskReason = (agentReason: string): string =>
  `agent reported blocked: ${agentReason}`;

const SPEC_GAP = /^SPEC GAP\b[\s:.-]*/i;

/** The gap an agent's reason names when it starts with "SPEC GAP", else null. */
export function specGap(agentReason: string): string | null {
  return SPEC_GAP.test(agentReason) ? agentReason.replace(SPEC_GAP, '') || 'no detail given' : null;
}

/** How the escalation names what the agent reported: a spec gap, or a blocker in its own words. */
export function describeAgentBlocker(agentReason: string): string {
  const gap = specGap(agentReason);
  return gap !== null
    ? `its agent found a spec gap: ${gap}`
    : `its agent reported it is blocked: ${agentReason}`;
}

/** The options of the question a spec gap becomes: the clarification (in the answer's text), skip, abort. */
export const SPEC_GAP_OPTIONS = ['answer', 'skip', 'abort'] as const;

/** The question a spec gap becomes (docs/PROCEDURE.md §3.10: only the user closes a spec gap; the task waits for the answer). */
export const specGapPrompt = (ref: string, title: string, gap: string, offered?: GapOptions | null): string =>
  `Task ${ref} (${title}) found a spec gap: ${gap}. ` +
  (offered
    ? `${gapOptionsSentence(offered)} the task is re-delegated with it`
    : `Answer 'answer' with the clarification in --text: the task is re-delegated with it`) +
  ` and it is recorded as a deviation from the spec. Or 'skip' the task (recorded as a deviation too), or ` +
  `'abort' the saga.`;

/** The clarification an answer gives: the user's own text, or the agent's option picked (with any note). */
export function gapClarification(answer: { choice: string; text?: string }): string {
  if (answer.choice === 'answer') return answer.text ?? '';
  const picked = gapOptionText(answer.choice);
  return answer.text ? `${picked} (${answer.text})` : picked;
}

/** The note the re-delegated agent gets: its own report and the user's clarification. */
export const specGapNote = (gap: string, user: string, answer: string): string =>
  `You reported a spec gap: ${gap}. The user (${user}) clarified: ${answer}. Follow the clarification; ` +
  `where it differs from the task spec, it wins.`;

/**
 * The progress log line that records how a spec gap was resolved; lines starting with "Deviation: " are the
 * saga's deviations from the agreed spec (docs/PROCEDURE.md §3.12: never silent re-scoping).
 */
export function specGapDeviation(
  ref: string,
  gap: string,
  answer: { user: string; choice: string; text?: string },
) {
  const how = answer.choice === 'answer' ? '' : ` with option ${answer.choice.slice(0, 3)}`;
  const outcome =
    answer.choice !== 'skip'
      ? `answered by ${answer.user}${how}: ${oneLine(gapClarification(answer))}`
      : `task skipped by ${answer.user}${answer.text ? `: ${oneLine(answer.text)}` : ''}`;
  return `Deviation: task ${ref} spec gap: ${gap} — ${outcome}`;
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The escalation of a task that stays blocked: the agent's own blocker, a blocker after re-delegation, or an agent that cannot run. */
export function escalationPrompt(
  task: { ref: string; title: string },
  blocker: {
    agentBlocked?: string;
    /** The user picked [E] Escalate at the task's quality-locked review checkpoint. */
    reviewEscalated?: boolean;
    /** The delegation that stayed blocked ran on a spec the planner had adjusted. */
    adjusted?: boolean;
    retryable: boolean;
    reason: string;
    evidence: string;
  },
): string {
  const { ref, title } = task;
  if (blocker.reviewEscalated)
    return `Task ${ref} (${title}): its quality-locked review was escalated to you at its checkpoint, and no further agent run starts without you. Answer retry (a new delegation, reviewed again; a note in --text), edit with the spec change in --text, skip or abort. Evidence: ${blocker.evidence}`;
  if (blocker.agentBlocked)
    return `Task ${ref} (${title}) is blocked: ${describeAgentBlocker(blocker.agentBlocked)}. Answer edit with the spec change in --text, retry with a note in --text, skip or abort. Evidence: ${blocker.evidence}`;
  return blocker.retryable
    ? `Task ${ref} (${title}) is still blocked after re-delegation${blocker.adjusted ? ' and a spec adjustment' : ''}: ${blocker.reason}. Answer retry with a note in --text, edit with the spec change in --text, skip or abort. Evidence: ${blocker.evidence}`
    : `Task ${ref} (${title}) cannot run its agent: ${blocker.reason}. Fix that, then retry (or skip/edit/abort). Transcript: ${blocker.evidence}`;
}

/** The escalation's prompt with how an edit is written (its text may change the task's checks and scope). */
const withEditHelp = (prompt: string): string => `${prompt}\nEdit: ${SPEC_EDIT_HELP}.`;

/** The escalation question of a task that stays blocked (options: retry, skip, edit with the spec change, abort). */
export const escalationQuestion = (
  task: { id: string; key: string; title: string; delegations: number },
  blocker: Parameters<typeof escalationPrompt>[1],
): InteractionRequest => ({
  id: `esc-${task.key}-d${task.delegations}`,
  kind: 'escalation',
  prompt: withEditHelp(escalationPrompt({ ref: task.id, title: task.title }, blocker)),
  options: ['retry', 'skip', 'edit', 'abort'],
  recommended: 0,
  textRequiredFor: ['edit'],
  textFormat: 'spec-edit',
});

/** A spec gap as a question; its answer re-delegates the task with the clarification. */
export const specGapQuestion = (
  task: { id: string; key: string; title: string; delegations: number },
  gap: string,
  offered?: GapOptions | null,
): InteractionRequest => ({
  id: `gap-${task.key}-d${task.delegations}`,
  kind: 'question',
  prompt: specGapPrompt(task.id, task.title, gap, offered),
  // The agent's options first, then the saga's own answers (own text, skip, abort).
  options: [...(offered?.options ?? []), ...SPEC_GAP_OPTIONS],
  recommended: offered ? offered.recommended : 0,
  textRequiredFor: ['answer'],
});

/** The decisions.md entry of an answered spec gap: a deviation from the agreed spec, never applied silently. */
export const specGapDecision = (
  task: { id: string; title: string },
  gap: string,
  answer: Answer,
): { at: string; title: string; lines: string[] } => ({
  at: answer.answeredAt,
  title: specGapDeviation(task.id, gap, answer),
  lines: [
    `- Task ${task.id} (${task.title}) reported a spec gap; ${answer.user} answered ${answer.interactionId}.`,
    `- ${answer.choice !== 'skip' ? 'The task is re-delegated with the clarification in its notes.' : 'The task is skipped.'}`,
  ],
});

/**
 * What the fleet does with a task that ended blocked (docs/PROCEDURE.md §3.10, §12.3): the
 * first time, re-delegate with the retained context; the second, when its checks failed or its agent timed
 * out, hung or crashed (something a clearer or smaller spec may resolve), re-delegate with the spec
 * adjusted by the planner; otherwise the user decides. A blocker no delegation can fix (a spec gap, an
 * agent that cannot run) goes to the user at once.
 * `streak`: blocked delegations in a row, this one included (2 after the user answered for the task).
 */
export function nextStepWhenBlocked(blocked: {
  streak: number;
  retryable: boolean;
  checksFailed: boolean;
  agentFailed?: boolean;
}): 'redelegate' | 'adjust' | 'ask' {
  if (!blocked.retryable) return 'ask';
  if (blocked.streak < 2) return 'redelegate';
  if (blocked.streak === 2 && (blocked.checksFailed || blocked.agentFailed === true)) return 'adjust';
  return 'ask';
}
