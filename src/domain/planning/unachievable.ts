/**
 * Unachievable validation (docs/PROCEDURE.md §5.2): a saga exit criterion whose check cannot run with the tools at hand.
 * The finding goes into the spec (the criterion's `finding`) and the progress log, and the user decides: a
 * check that can run, verification by hand at acceptance, or dropping the criterion. Pure.
 */
import type { ExitCriterion } from '../plan';
import type { InteractionRequest } from '../contract/state';

export const UNACHIEVABLE_OPTIONS = ['new check', 'verify by hand', 'drop'] as const;

export const unachievableInteractionId = (round: number, id: string): string =>
  `unachievable-r${round}-${id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;

/** Why a check cannot run, from the shell's exit code (126: not executable, 127: not found). */
export function unachievableFinding(check: string, exitCode: number | null): string {
  const why = exitCode === 126 ? 'cannot be executed' : 'is not found';
  return `its check \`${check}\` cannot run with the tools here: the command ${why} (exit ${exitCode ?? '?'})`;
}

/** The progress log line (PROGRESS.md, Decisions & Deviations) noting the finding. */
export const unachievableDeviation = (c: ExitCriterion, finding: string): string =>
  `Deviation: exit criterion ${c.id} (${c.text}) cannot be checked: ${finding}`;

export function unachievableQuestion(round: number, c: ExitCriterion, finding: string): InteractionRequest {
  return {
    id: unachievableInteractionId(round, c.id),
    kind: 'question',
    prompt:
      `Exit criterion ${c.id} "${c.text}" cannot be checked: ${finding}. The spec (SAGA.md) notes it. Answer ` +
      `'new check' with a command in --text that can run here (exit 0 = met), 'verify by hand' to check it ` +
      `yourself at acceptance, or 'drop' to remove it from the exit criteria.`,
    options: [...UNACHIEVABLE_OPTIONS],
    recommended: 0,
    textRequiredFor: ['new check'],
    textFormat: 'check-command',
  };
}

/** The exit criteria after the user's answers (by criterion id): checks replaced, verified by hand, dropped. */
export function applyUnachievableAnswers(
  criteria: ExitCriterion[],
  answers: Map<string, { choice: string; text?: string; user: string; finding: string }>,
): ExitCriterion[] {
  return criteria.flatMap((c): ExitCriterion[] => {
    const answer = answers.get(c.id);
    if (!answer) return [c];
    if (answer.choice === 'drop') return [];
    if (answer.choice === 'new check')
      return [
        {
          ...c,
          check: answer.text!.trim(),
          finding: `${answer.finding}; replaced by ${answer.user} with this check`,
        },
      ];
    return [{ ...c, by_hand: true, finding: `${answer.finding}; verified by hand (${answer.user})` }];
  });
}

/**
 * The acceptance prompt's line for criteria verified by hand: the steps are in REPORT.md, and accepting
 * confirms them (they then count as verified by the user); empty when there are none.
 */
export function byHandAcceptanceLine(
  criteria: readonly { id: string; text: string; result: string }[],
): string {
  const byHand = criteria.filter((c) => c.result === 'by-hand');
  if (!byHand.length) return '';
  const list = byHand.map((c) => `${c.id} "${c.text}"`).join(', ');
  return (
    `Verify by hand before you accept: ${list} (the steps are in the report's Manual verification). ` +
    `Accepting confirms you verified ${byHand.length > 1 ? 'them' : 'it'}: ${byHand.length > 1 ? 'they count' : 'it counts'} as verified by the user. ` +
    `If one does not hold, report it as an issue.`
  );
}

/** The exit results once the user accepted: each criterion to verify by hand counts as verified by them. */
export const verifiedByUser = <R extends { result: string; evidence: string | null }>(
  results: readonly R[],
  user: string,
): R[] =>
  results.map((r) =>
    r.result === 'by-hand'
      ? { ...r, result: 'verified-by-user', evidence: `verified by hand by ${user} at acceptance` }
      : r,
  );
