/** The plan file's schema (the plan file contract) and the types read from it. Pure. */
import { z } from 'zod';
import { SAGA_NAME_PATTERN } from '../contract/naming';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
const TASK_REF_PATTERN = /^\d+\.\d+$/;

const text = z.string().trim().min(1);
/** Slugs end up in branch, folder and file names: long ones hit ENAMETOOLONG deep in a run. */
export const MAX_SLUG_LENGTH = 40;
const slug = z.string().regex(SLUG_PATTERN).max(MAX_SLUG_LENGTH);
const positiveId = z.number().int().min(1);

/** Relative, inside the repo: no absolute paths (POSIX or Windows drive) and no `..` segments. */
export function isSafeRelativePath(p: string): boolean {
  if (p.startsWith('/') || p.startsWith('\\') || /^[a-zA-Z]:/.test(p) || p.includes('\0')) return false;
  return !p.split(/[\\/]+/).includes('..');
}

const CheckSchema = z.object({ text, check: text }).strict();

export const ExitCriterionSchema = z
  .object({
    id: text,
    text,
    check: text,
    /** What validation found out about the criterion, e.g. that its check cannot run here (the spec says so). */
    finding: text.optional(),
    /** Verified by hand at acceptance: its check is not run (the user's answer to an unachievable check). */
    by_hand: z.boolean().optional(),
    /** The planner's feature-specific steps a person follows to see it hold (REPORT.md's Manual verification). */
    manual: z.array(text).max(20).optional(),
  })
  .strict();

export const PlanTaskSchema = z
  .object({
    id: positiveId,
    slug,
    title: text,
    depends_on: z.array(z.string().regex(TASK_REF_PATTERN)).default([]),
    scope: text,
    owns: z.array(text.refine(isSafeRelativePath)),
    interfaces: z.string().default(''),
    validation_method: text,
    validation: z.array(CheckSchema).min(1),
    evidence: text,
    agent: text.optional(),
    /** The task passes only if its branch changes files (acceptance fixes): a no-op is blocked. */
    requires_changes: z.boolean().optional(),
  })
  .strict();

export const PlanMilestoneSchema = z
  .object({
    id: positiveId,
    slug,
    title: text,
    depends_on: z.array(positiveId).default([]),
    goal: text,
    validation: z.array(CheckSchema).default([]),
    tasks: z.array(PlanTaskSchema).min(1),
  })
  .strict();

export const PlanSchema = z
  .object({
    name: z.string().regex(SAGA_NAME_PATTERN).optional(),
    problem: text,
    scope: z
      .object({
        in: z.array(z.string()).default([]),
        out: z.array(z.string()).default([]),
        delegated: z.array(z.string()).default([]),
      })
      .strict()
      .default({}),
    exit_criteria: z.array(ExitCriterionSchema).min(1),
    milestones: z.array(PlanMilestoneSchema).min(1),
    rationale: z.array(z.string()).optional(),
    tradeoffs: z
      .object({ short_term: z.string(), long_term: z.string(), balance: z.string() })
      .strict()
      .optional(),
  })
  .strict();

export type Plan = z.infer<typeof PlanSchema>;
export type PlanMilestone = Plan['milestones'][number];
export type PlanTask = PlanMilestone['tasks'][number];
export type ExitCriterion = z.infer<typeof ExitCriterionSchema>;
export type PlanResult = { ok: true; plan: Plan } | { ok: false; errors: string[] };
