/**
 * An implementer's blocked report (templates/implementer.md, seed 003 P2.4): the agent writes
 * `{"status": "blocked", "reason": "SPEC GAP: ..."}` to $SAGA_REPORT_FILE when it cannot finish. Pure.
 */

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

/** The question a spec gap becomes (seed 003: escalate spec gaps to the user, do not proceed until resolved). */
export const specGapPrompt = (ref: string, title: string, gap: string): string =>
  `Task ${ref} (${title}) found a spec gap: ${gap}. Answer 'answer' with the clarification in --text: the ` +
  `task is re-delegated with it and it is recorded as a deviation from the spec. Or 'skip' the task ` +
  `(recorded as a deviation too), or 'abort' the saga.`;

/** The note the re-delegated agent gets: its own report and the user's clarification. */
export const specGapNote = (gap: string, user: string, answer: string): string =>
  `You reported a spec gap: ${gap}. The user (${user}) clarified: ${answer}. Follow the clarification; ` +
  `where it differs from the task spec, it wins.`;

/**
 * The progress log line that records how a spec gap was resolved; lines starting with "Deviation: " are the
 * saga's deviations from the agreed spec (seed 003, Continuing step 5: never silent re-scoping).
 */
export function specGapDeviation(
  ref: string,
  gap: string,
  answer: { user: string; choice: string; text?: string },
) {
  const outcome =
    answer.choice === 'answer'
      ? `answered by ${answer.user}: ${oneLine(answer.text ?? '')}`
      : `task skipped by ${answer.user}${answer.text ? `: ${oneLine(answer.text)}` : ''}`;
  return `Deviation: task ${ref} spec gap: ${gap} — ${outcome}`;
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
