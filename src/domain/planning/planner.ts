/** The planner/reviewer protocol (docs/ARCHITECTURE.md, Contracts): what agents answer, validated before the saga trusts it. */
import { z } from 'zod';
import { SignalConflictSchema } from './memory';
import { ExitCriterionSchema, planSummary, type ExitCriterion, type Plan } from '../plan';
import type { InteractionRequest, PlanSummary } from '../contract/state';
import { zodIssueLines } from '../text/zod-errors';

const RECOMMENDED_REQUIRED = 'the 0-based index of the option you recommend is required';

export const PlannerQuestionSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'ids are 1-40 letters, digits, _ or -'),
  text: z.string().min(1),
  options: z.array(z.string().min(1)).min(2, 'a question needs at least 2 options'),
  // docs/PROCEDURE.md §2.4: every question comes with the option the planner recommends.
  recommended: z
    .number({ required_error: RECOMMENDED_REQUIRED, invalid_type_error: RECOMMENDED_REQUIRED })
    .int()
    .min(0),
  substantive: z.boolean().default(true),
  why: z.string().optional(),
});
export type PlannerQuestion = z.infer<typeof PlannerQuestionSchema>;

export const PlannerDecisionSchema = z.object({
  question: z.string(),
  choice: z.string(),
  citation: z.string().default('default — no signal'),
  confident: z.boolean(),
  substantive: z.boolean().default(true),
  /** Memory and codebase disagree: the saga decides, the newer signal wins (autonomous mode's conflict handling). */
  conflict: SignalConflictSchema.optional(),
});
export type PlannerDecision = z.infer<typeof PlannerDecisionSchema>;

export const PlannerQuestionsOutputSchema = z
  .object({
    problem: z.string().default(''),
    /** The planner's restatement (docs/PROCEDURE.md §2.3), round 1: the feature's rough shape and its major unknowns. */
    shape: z.string().default(''),
    unknowns: z.array(z.string()).default([]),
    questions: z.array(PlannerQuestionSchema).default([]),
    decisions: z.array(PlannerDecisionSchema).default([]),
  })
  .superRefine((out, ctx) => {
    // Ids become interaction ids (`q<round>-<id>`, lowercased): two that collide would share one answer.
    const seen = new Map<string, number>();
    out.questions.forEach((q, i) => {
      const key = questionInteractionId(0, q.id);
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['questions', i, 'id'],
          message: `id '${q.id}' is the same as questions.${first}.id (ids are compared case-insensitively)`,
        });
      } else seen.set(key, i);
    });
    out.questions.forEach((q, i) => {
      if (q.recommended >= q.options.length) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['questions', i, 'recommended'],
          message: `recommended is ${q.recommended} but there are only ${q.options.length} options (0-based)`,
        });
      }
    });
  });
export type PlannerQuestionsOutput = z.infer<typeof PlannerQuestionsOutputSchema>;

/**
 * Planner stage `criteria` (docs/PROCEDURE.md §2.5, before decomposing): the saga's exit criteria. A whole plan is
 * accepted too (its `exit_criteria` are taken), so a planner that answers every stage with its plan still works.
 */
export const PlannerCriteriaOutputSchema = z
  .object({ exit_criteria: z.array(ExitCriterionSchema).min(1, 'give at least one exit criterion') })
  .passthrough();

/**
 * The decomposition keeps the exit criteria agreed in §2.5 of docs/PROCEDURE.md: they replace whatever the `plan` stage's answer
 * says (or omits), before the plan is validated.
 */
export function withAgreedCriteria(raw: unknown, criteria: ExitCriterion[]): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  return { ...(raw as Record<string, unknown>), exit_criteria: criteria };
}

/** What is wrong with a planner's output, one line per problem (`questions.1.id: ...`). */
export const zodErrors = (error: z.ZodError): string[] => zodIssueLines(error, '(root)');

export const QUESTION_BATCH = 4;

/** Splits questions into batches of at most 4 (docs/PROCEDURE.md §2.4: the limit per ask). */
export function batches<T>(items: T[], size = QUESTION_BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Interaction id for a planner question: `q<round>-<id>`, lowercased for the id alphabet. */
export const questionInteractionId = (round: number, id: string): string =>
  `q${round}-${id.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;

export function questionInteraction(
  round: number,
  q: PlannerQuestion,
  withDefault: boolean,
): InteractionRequest {
  const options = withDefault ? [...q.options, '[D] default'] : q.options;
  return {
    id: questionInteractionId(round, q.id),
    kind: 'question',
    prompt: q.why ? `${q.text}\n(${q.why})` : q.text,
    options,
    recommended: q.recommended,
  };
}

/** What `saga status` shows of a plan; small enough to live in workflow history. */
export function summarizePlan(
  plan: Plan,
  at: { version: number | null; state: PlanSummary['state']; specPath: string },
): PlanSummary {
  return {
    version: at.version,
    state: at.state,
    problem: plan.problem,
    milestones: plan.milestones.length,
    tasks: plan.milestones.reduce((n, m) => n + m.tasks.length, 0),
    // A finding (validation could not check it) changes the summary: readers re-read the spec then.
    exitCriteria: plan.exit_criteria.map((c) => `${c.id}: ${c.text}${c.finding ? ` (${c.finding})` : ''}`),
    text: planSummary(plan),
    specPath: at.specPath,
  };
}

/** Autonomous mode's note, word for word, when autonomous mode gives way to asking. */
export const AUTONOMY_INSUFFICIENT_NOTE =
  'Autonomous mode found insufficient context. Switching to interactive elicitation.';

/**
 * Autonomous mode's failure mode: autonomous planning degrades to interactive elicitation when EVERY substantive
 * decision so far requires asking (at least one does, none was decided confidently). Counts are over the
 * whole elicitation: planner questions (substantive ones) and unconfident substantive decisions are asked,
 * confident substantive decisions are decided.
 */
export function autonomyInsufficient(counts: {
  askedSubstantive: number;
  decidedSubstantive: number;
}): boolean {
  return counts.askedSubstantive > 0 && counts.decidedSubstantive === 0;
}
