/**
 * Reading `saga.config.yaml`'s text: YAML (or JSON), then `SagaConfigSchema`. Kept apart from `config.ts`
 * because workflows import that, and every workflow run would evaluate the YAML parser's modules.
 */
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { SagaConfigSchema, type SagaConfig } from './config';
import { formatPath } from '../text/zod-errors';

export type ParseSagaConfigResult = { ok: true; config: SagaConfig } | { ok: false; errors: string[] };

/** Parses the YAML (or JSON) text of a config file; every error names the file and the path inside it. */
export function parseSagaConfigText(text: string, fileName: string): ParseSagaConfigResult {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => {
        const where = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
        const message = e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
        return `${fileName}: YAML syntax error${where}: ${message}`;
      }),
    };
  }
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, errors: [`${fileName}: expected a mapping of settings at the top level.`] };
  }
  const parsed = SagaConfigSchema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  return { ok: false, errors: parsed.error.issues.map((issue) => formatIssue(fileName, issue)) };
}

function formatIssue(fileName: string, issue: z.ZodIssue): string {
  const where = formatPath(issue.path) || '(top level)';
  if (issue.code === z.ZodIssueCode.unrecognized_keys) {
    return `${fileName}: ${where}: unknown setting${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  }
  return `${fileName}: ${where}: ${issue.message}`;
}
