/**
 * A `D<n>: …` issue reported at acceptance corrects an autonomous decision: the fix task it becomes says
 * what D<n> was, what was chosen and what the user wants instead (the line alone names none of it), and
 * the rationale block shows the corrected choice. Pure: also runs in workflow code.
 */
import type { DecisionCorrection } from '../planning/memory';
import type { PlanMilestone } from '../plan';

/** Text on one line (a spec's scope is one paragraph). */
const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The fix task's scope for a correction: the decision, its choice and citation, and the correction. */
export function correctionScope(c: DecisionCorrection): string {
  const d = c.decision;
  return (
    `Correct autonomous decision D${c.number}. The question: ${oneLine(d.question)}. ` +
    `The saga chose: ${oneLine(d.choice)} (${oneLine(d.citation)}). ` +
    `The user corrected it at acceptance to: ${oneLine(c.correction)}. ` +
    `Change the work so it follows the correction wherever it relied on the earlier choice.`
  );
}

const CORRECTION_LINE = /^\s*D(\d+)\s*[:=-]/i;

/**
 * The issues' milestone with each correction's task spec carrying the decision: `issues` are the reported
 * issue texts, one task each, in order (as issuesMilestone made them).
 */
export function withCorrectionScopes(
  milestone: PlanMilestone,
  issues: string[],
  corrections: DecisionCorrection[],
): PlanMilestone {
  return {
    ...milestone,
    tasks: milestone.tasks.map((task, i) => {
      const n = Number(CORRECTION_LINE.exec(issues[i] ?? '')?.[1]);
      const c = corrections.find((x) => x.number === n);
      return c ? { ...task, scope: correctionScope(c) } : task;
    }),
  };
}

/** A rationale bullet for the decision's question (`**question:** …`), whatever its choice. */
const bulletFor = (question: string) => `**${question}:**`;

/**
 * The rationale block's bullets with each corrected decision showing the user's choice and a note that it
 * was corrected at acceptance; a decision the block did not list is added.
 */
export function correctedRationale(
  rationale: string[],
  corrections: DecisionCorrection[],
  at: { where: string; user: string },
): string[] {
  const next = [...rationale];
  for (const c of corrections) {
    const d = c.decision;
    const bullet =
      `${bulletFor(d.question)} ${c.correction} — corrected by ${at.user} at ${at.where} (D${c.number}; ` +
      `was "${d.choice}", ${d.citation}; [LRN:correction] in decisions.md)`;
    const i = next.findIndex((r) => r.startsWith(bulletFor(d.question)));
    if (i >= 0) next[i] = bullet;
    else next.push(bullet);
  }
  return next;
}
