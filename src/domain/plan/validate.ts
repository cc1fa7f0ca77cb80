/**
 * Checking a plan: the schema, then the semantic checks zod alone cannot express. Nothing here throws on bad
 * input; every problem comes back as a message. Pure, and free of the YAML parser (workflows import it).
 */
import { semanticProblems } from './checks';
import { issueMessage } from './issues';
import { PlanSchema, type PlanResult } from './schema';

const MAX_ERRORS = 50;

/** Validate an already-parsed plan object (e.g. planner JSON). Never throws. */
export function validatePlan(raw: unknown, fileName: string): PlanResult {
  try {
    const parsed = PlanSchema.safeParse(raw);
    if (!parsed.success) return planFailure(parsed.error.issues.map((i) => issueMessage(i, raw, fileName)));
    const problems = semanticProblems(parsed.data).map((p) => `${fileName}: ${p}`);
    return problems.length ? planFailure(problems) : { ok: true, plan: parsed.data };
  } catch (err) {
    return planFailure([
      `${fileName}: could not validate the plan (${(err as Error)?.message ?? String(err)})`,
    ]);
  }
}

/** A failed plan result: each problem once, at most MAX_ERRORS of them. */
export function planFailure(errors: string[]): PlanResult {
  const unique = [...new Set(errors)];
  if (unique.length <= MAX_ERRORS) return { ok: false, errors: unique };
  return {
    ok: false,
    errors: [...unique.slice(0, MAX_ERRORS), `... and ${unique.length - MAX_ERRORS} more`],
  };
}
