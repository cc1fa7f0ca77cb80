/**
 * What `saga continue` sends the saga after comparing its record with git and the evidence, and what the
 * saga keeps of it (its status shows the latest). Pure; the comparison and its texts are in
 * src/domain/record/reconciliation.ts.
 */
import { z } from 'zod';
import { zodIssueLines } from '../text/zod-errors';

/** Enough for any saga's findings, small enough for an update's payload and the saga's state. */
export const MAX_FINDINGS = 200;
export const MAX_FINDING_CHARS = 500;

export const ReconciliationFindingSchema = z.object({
  /** The task it is about ("1.2"), or null for the saga as a whole (a stray worktree). */
  task: z.string().min(1).max(20).nullable(),
  text: z.string().min(1).max(MAX_FINDING_CHARS),
});
export type ReconciliationFinding = z.infer<typeof ReconciliationFindingSchema>;

/** What `saga continue` sends the saga (the saga adds when it received it). */
export const ReconciliationInputSchema = z.object({
  findings: z.array(ReconciliationFindingSchema).max(MAX_FINDINGS),
  /** How much was looked at, so "no findings" says what agrees. */
  checked: z.object({
    tasks: z.number().int().nonnegative(),
    evidenceFiles: z.number().int().nonnegative(),
  }),
});
export type ReconciliationInput = z.infer<typeof ReconciliationInputSchema>;

export const ReconciliationSchema = ReconciliationInputSchema.extend({ at: z.string() });
export type Reconciliation = z.infer<typeof ReconciliationSchema>;

/** The input as the saga accepts it; an error naming each problem otherwise (the update is refused). */
export function parseReconciliationInput(raw: unknown): ReconciliationInput {
  const parsed = ReconciliationInputSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`reconcile: invalid input: ${zodIssueLines(parsed.error, 'input').join('; ')}`);
  return parsed.data;
}
