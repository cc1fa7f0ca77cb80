/**
 * Reading a plan: parse YAML or JSON, check it against the schema, then the semantic checks zod alone cannot
 * express. Nothing here throws on bad input; every problem comes back as a message. Pure.
 */
import YAML from 'yaml';
import { semanticProblems } from './checks';
import { issueMessage } from './issues';
import { PlanSchema, type PlanResult } from './schema';

const MAX_ERRORS = 50;

/** Validate an already-parsed plan object (e.g. planner JSON). Never throws. */
export function validatePlan(raw: unknown, fileName: string): PlanResult {
  try {
    const parsed = PlanSchema.safeParse(raw);
    if (!parsed.success) return failure(parsed.error.issues.map((i) => issueMessage(i, raw, fileName)));
    const problems = semanticProblems(parsed.data).map((p) => `${fileName}: ${p}`);
    return problems.length ? failure(problems) : { ok: true, plan: parsed.data };
  } catch (err) {
    return failure([`${fileName}: could not validate the plan (${(err as Error)?.message ?? String(err)})`]);
  }
}

function failure(errors: string[]): PlanResult {
  const unique = [...new Set(errors)];
  if (unique.length <= MAX_ERRORS) return { ok: false, errors: unique };
  return {
    ok: false,
    errors: [...unique.slice(0, MAX_ERRORS), `... and ${unique.length - MAX_ERRORS} more`],
  };
}

/** Parse YAML or JSON text (JSON for `.json` files or text starting with `{`), then validate. Never throws. */
export function parsePlanText(text: string, fileName: string): PlanResult {
  try {
    const asJson =
      /\.json$/i.test(fileName) || (!/\.ya?ml$/i.test(fileName) && text.trimStart().startsWith('{'));
    if (asJson) {
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        return failure([`${fileName}: not valid JSON: ${(err as Error).message}`]);
      }
      return validatePlan(raw, fileName);
    }
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    if (doc.errors.length) {
      return failure(doc.errors.map((e) => `${fileName}: not valid YAML: ${e.message.split('\n')[0]}`));
    }
    return validatePlan(doc.toJS({ maxAliasCount: 100 }), fileName);
  } catch (err) {
    return failure([`${fileName}: could not read the plan (${(err as Error)?.message ?? String(err)})`]);
  }
}
