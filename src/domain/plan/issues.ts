/** A plan's schema problems as messages naming the file, the path inside it and what was expected. Pure. */
import type { z } from 'zod';
import { formatPath } from '../text/zod-errors';

const SLUG_TEXT = 'a slug (a-z, 0-9 and "-", starting with a letter or digit)';

/**
 * What each field should hold, keyed by path suffix with indices as `*`; the longest matching suffix wins,
 * so `tasks.*.depends_on` beats a bare `depends_on`.
 */
const EXPECTATIONS: Record<string, string> = {
  '': 'a plan object (a YAML mapping or JSON object)',
  name: 'a saga name (1-63 characters of a-z, 0-9 and "-", starting with a letter or digit)',
  problem: 'a non-empty problem statement',
  scope: 'an object {in, out, delegated}',
  'scope.in': 'an array of strings',
  'scope.out': 'an array of strings',
  'scope.delegated': 'an array of strings',
  'scope.*.*': 'a string',
  exit_criteria: 'a non-empty array of {id, text, check}',
  'exit_criteria.*': 'an object {id, text, check}',
  'exit_criteria.*.id': 'a non-empty id like "E1"',
  text: 'a non-empty description',
  check: 'a non-empty command',
  milestones: 'a non-empty array of milestones',
  'milestones.*': 'a milestone object {id, slug, title, depends_on, goal, validation, tasks}',
  'milestones.*.id': 'a milestone id (an integer >= 1)',
  slug: SLUG_TEXT,
  title: 'a non-empty title',
  'milestones.*.depends_on': 'an array of milestone ids (integers)',
  'milestones.*.depends_on.*': 'a milestone id (an integer >= 1)',
  goal: 'a non-empty goal',
  validation: 'an array of {text, check}',
  'validation.*': 'an object {text, check}',
  'tasks.*.validation': 'a non-empty array of {text, check}',
  'milestones.*.tasks': 'a non-empty array of tasks',
  'tasks.*':
    'a task object {id, slug, title, depends_on, scope, owns, interfaces, validation_method, validation, evidence}',
  'tasks.*.id': 'a task id (an integer >= 1)',
  'tasks.*.depends_on': 'an array of task refs like "1.2"',
  'tasks.*.depends_on.*': 'a task ref string like "1.2" (quote it in YAML)',
  'tasks.*.scope': 'a non-empty description of the task scope',
  'tasks.*.owns': 'an array of paths',
  'tasks.*.owns.*': 'a relative path inside the repo (no leading "/", no "..")',
  'tasks.*.interfaces': 'a string',
  'tasks.*.validation_method': 'a non-empty validation method (e.g. "unit tests")',
  'tasks.*.evidence': 'a non-empty description of the evidence',
  'tasks.*.agent': 'an agent profile name',
  'tasks.*.requires_changes': 'true or false (true: a task that changes no files is blocked)',
  rationale: 'an array of strings',
  'rationale.*': 'a string',
  tradeoffs: 'an object {short_term, long_term, balance}',
  'tradeoffs.short_term': 'a string',
  'tradeoffs.long_term': 'a string',
  'tradeoffs.balance': 'a string',
};

type PathSegment = string | number;

function expectationFor(path: readonly PathSegment[]): string | undefined {
  const segments = path.map((s) => (typeof s === 'number' ? '*' : s));
  for (let start = 0; start <= segments.length; start++) {
    const key = segments.slice(start).join('.');
    if (start === segments.length && segments.length > 0) break; // '' only describes the top level
    if (key in EXPECTATIONS) return EXPECTATIONS[key];
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let value: unknown = root;
  for (const seg of path) {
    if (value === null || typeof value !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(value, seg)) return undefined;
    value = (value as Record<PathSegment, unknown>)[seg];
  }
  return value;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  float: 'a non-integer number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
  undefined: 'nothing',
  bigint: 'a number',
  date: 'a date',
};

function showValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
    return value.trim() === '' ? `an empty string` : shown;
  }
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** One schema problem as `file: path: expected X, got Y`, in the words of the plan file's fields. */
export function issueMessage(issue: z.ZodIssue, raw: unknown, fileName: string): string {
  const where = issue.path.length ? `${fileName}: ${formatPath(issue.path)}` : fileName;
  const expected = expectationFor(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (check the spelling)`;
  }
  if (issue.code === 'invalid_type') {
    const want = expected ?? TYPE_NAMES[issue.expected] ?? issue.expected;
    if (issue.received === 'undefined') return `${where}: missing; expected ${want}`;
    return `${where}: expected ${want}, got ${TYPE_NAMES[issue.received] ?? issue.received}`;
  }
  if (issue.code === 'too_big' && issue.type === 'string') {
    const value = String(valueAt(raw, issue.path));
    return `${where}: expected at most ${String(issue.maximum)} characters, got ${value.length} (${showValue(value)})`;
  }
  if (!expected) return `${where}: ${issue.message}`;
  return `${where}: expected ${expected}, got ${showValue(valueAt(raw, issue.path))}`;
}
