/**
 * Autonomous mode's normal approval checkpoint under --quality-locked ([A] Review / [S] Skip review / [R] Revise /
 * [N] New session) and what the plan approval says after a review that did not pass. Pure.
 */

export const CHECKPOINT_REVIEW = '[A] Review';
export const CHECKPOINT_SKIP = '[S] Skip review';
export const CHECKPOINT_REVISE = '[R] Revise';
export const CHECKPOINT_NEW_SESSION = '[N] New session';

export type CheckpointChoice = 'review' | 'skip' | 'revise' | 'new-session';

/** The options offered: [R] and [N] only where the artifact's author can revise or draft it afresh. */
export function checkpointOptions(can: { revise: boolean; newSession: boolean }): string[] {
  return [
    CHECKPOINT_REVIEW,
    CHECKPOINT_SKIP,
    ...(can.revise ? [CHECKPOINT_REVISE] : []),
    ...(can.newSession ? [CHECKPOINT_NEW_SESSION] : []),
  ];
}

export function checkpointChoice(choice: string): CheckpointChoice {
  if (choice === CHECKPOINT_SKIP) return 'skip';
  if (choice === CHECKPOINT_REVISE) return 'revise';
  if (choice === CHECKPOINT_NEW_SESSION) return 'new-session';
  return 'review';
}

/** The checkpoint is asked again after [R] or [N]: each time under an id of its own (the first keeps its id). */
export const checkpointInteractionId = (checkpoint: string, ask: number): string =>
  ask === 1 ? `${checkpoint}-review` : `${checkpoint}-review-${ask}`;

/**
 * The plan approval after the quality-locked review: a review the user escalated ([E]) or forced ([F]) did
 * not pass, so the approval says so and recommends nothing (the user's judgement, as at the exception).
 */
export function reviewedApproval(outcome: string): { note: string | null; recommended: number | null } {
  if (outcome === 'escalated')
    return {
      note:
        'The quality-locked review was escalated to you ([E] Escalate): this plan did not pass review. ' +
        "The reviewer's findings are listed in manifest.md (quality_locked_history). Approve it as it " +
        'stands, revise it with a note, or reject it.',
      recommended: null,
    };
  if (outcome === 'forced')
    return {
      note: 'The quality-locked review was forced past its cap ([F] Force): this plan did not pass review.',
      recommended: null,
    };
  return { note: null, recommended: 0 };
}
