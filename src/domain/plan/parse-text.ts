/**
 * Reading a plan file's text: YAML or JSON, then `validatePlan`. Kept apart from `validate.ts` because the
 * workflows import that, and every workflow run would evaluate the YAML parser's modules (replay time).
 */
import YAML from 'yaml';
import { planFailure, validatePlan } from './validate';
import type { PlanResult } from './schema';

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
        return planFailure([`${fileName}: not valid JSON: ${(err as Error).message}`]);
      }
      return validatePlan(raw, fileName);
    }
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    if (doc.errors.length) {
      return planFailure(doc.errors.map((e) => `${fileName}: not valid YAML: ${e.message.split('\n')[0]}`));
    }
    return validatePlan(doc.toJS({ maxAliasCount: 100 }), fileName);
  } catch (err) {
    return planFailure([`${fileName}: could not read the plan (${(err as Error)?.message ?? String(err)})`]);
  }
}
