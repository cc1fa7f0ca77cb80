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

/** How the escalation names what the agent reported: a spec gap, or a blocker in its own words. */
export function describeAgentBlocker(agentReason: string): string {
  return SPEC_GAP.test(agentReason)
    ? `its agent found a spec gap: ${agentReason.replace(SPEC_GAP, '') || 'no detail given'}`
    : `its agent reported it is blocked: ${agentReason}`;
}
