/**
 * The text of an `edit` answer (an escalation of a blocked task, or the user's own version of a planner's
 * adjustment): plain text is a note to the task's agent, as it always was; lines that start with a field
 * name change that field of the task's spec, like an edit of the plan file would:
 *
 *     check: npm test -- greet
 *     scope: Only src/greet.js; the CLI stays as it is.
 *
 * `check:` lines (one command each) replace the task's checks; a text field's value may go on over the
 * lines that follow it. Lines before the first field are the note. Pure: the respond validator refuses a
 * text that does not parse (nothing changes), and the fleet reads the same text into the task's spec change.
 */
import { checkCommand, type Parsed } from '../planning/acceptance-issues';
import type { Answer, SpecChange } from '../contract/state';
import { describeAdjustment } from './spec-changes';

type Patch = NonNullable<SpecChange['patch']>;
type TextField = 'scope' | 'interfaces' | 'validation_method' | 'evidence';

export interface SpecEdit {
  /** The free text (lines before the first field; all of it when no line names a field). */
  note: string;
  /** The fields the edit sets; null for a plain note. */
  patch: Patch | null;
}

const TEXT_FIELDS: readonly TextField[] = ['scope', 'interfaces', 'validation_method', 'evidence'];
const CHECK_KEYS = ['check', 'checks', 'validation'];
/** Fields of a task the saga keeps as agreed (ids, owned files, dependencies, profile). */
const FIXED_KEYS = ['id', 'slug', 'title', 'owns', 'depends_on', 'agent', 'requires_changes'];

/** The text a check set by an edit is listed with (the task's spec file, the agent's task). */
export const EDIT_CHECK_TEXT = "the user's check (spec edit)";

/** How to write an edit; the escalation and adjustment questions show it. */
export const SPEC_EDIT_HELP =
  "plain text is a note to the agent; a line 'check: COMMAND' (one per check, replacing the task's " +
  "checks), 'scope: ...', 'interfaces: ...', 'validation_method: ...' or 'evidence: ...' changes that " +
  'field of the task spec';

const FIELD_LINE = /^\s*(?:[-*]\s+)?([A-Za-z_]+)\s*:(.*)$/;

const keyOf = (line: string): { key: string; value: string } | null => {
  const match = FIELD_LINE.exec(line);
  if (!match) return null;
  const key = match[1]!.toLowerCase();
  const known = [...TEXT_FIELDS, ...CHECK_KEYS, ...FIXED_KEYS, 'note'].includes(key);
  return known ? { key, value: match[2]!.trim() } : null;
};

/** The edit in `text`, or what is wrong with it (naming the line). */
export function parseSpecEdit(text: string | undefined): Parsed<SpecEdit> {
  const lines = (text ?? '').split(/\r\n|\r|\n/);
  if (!lines.some((line) => isField(line)))
    return { ok: true, value: { note: (text ?? '').trim(), patch: null } };
  const note: string[] = [];
  const fields: Partial<Record<TextField, string[]>> = {};
  const checks: { text: string; check: string }[] = [];
  let current: TextField | 'check' | 'note' = 'note';
  for (const [index, raw] of lines.entries()) {
    const where = `Edit line ${index + 1}`;
    const field = keyOf(raw);
    if (!field) {
      if (!raw.trim()) continue;
      if (current === 'check')
        return { ok: false, error: `${where} follows a check: write each check on its own 'check:' line.` };
      (current === 'note' ? note : fields[current]!).push(raw.trim());
      continue;
    }
    const { key, value } = field;
    if (FIXED_KEYS.includes(key))
      return {
        ok: false,
        error: `${where}: '${key}' cannot be changed by an edit (ids, owned files and dependencies stay as agreed); ${SPEC_EDIT_HELP}.`,
      };
    if (CHECK_KEYS.includes(key)) {
      const check = checkCommand(value);
      if (!check.ok) return { ok: false, error: `${where}: ${check.error}` };
      checks.push({ text: EDIT_CHECK_TEXT, check: check.value });
      current = 'check';
    } else if (key === 'note') {
      if (value) note.push(value);
      current = 'note';
    } else {
      const name = key as TextField;
      if (fields[name]) return { ok: false, error: `${where}: '${name}' is given twice.` };
      fields[name] = value ? [value] : [];
      current = name;
    }
  }
  const patch: Patch = {};
  for (const name of TEXT_FIELDS) {
    const value = fields[name]?.join('\n').trim();
    if (value === undefined) continue;
    if (!value && name !== 'interfaces')
      return { ok: false, error: `The edit's '${name}:' is empty; give its new text after the colon.` };
    patch[name] = value;
  }
  if (checks.length) patch.validation = checks;
  return { ok: true, value: { note: note.join('\n'), patch } };
}

const isField = (line: string): boolean => {
  const field = keyOf(line);
  return field !== null && field.key !== 'note';
};

/** Why `text` is not a valid edit, or null (the respond validator's check). */
export function specEditProblem(text: string | undefined): string | null {
  const parsed = parseSpecEdit(text);
  return parsed.ok ? null : parsed.error;
}

/** How an edit reads in the task's spec changes: its note, then the fields it set. */
export function describeSpecEdit(edit: SpecEdit): string {
  const fields = edit.patch ? describeAdjustment(edit.patch) : '';
  return [edit.note.replace(/\s+/g, ' ').trim(), fields].filter(Boolean).join(' — ');
}

/**
 * The spec change an `edit` answer makes. A text the validator did not see (an interaction opened before
 * edits could set fields) that does not parse stays a note, as it was then.
 */
export function specEditChange(answer: Answer): SpecChange {
  const parsed = parseSpecEdit(answer.text);
  const base = { source: 'edit' as const, by: answer.user, at: answer.answeredAt };
  if (!parsed.ok || !parsed.value.patch) return { ...base, text: answer.text ?? '' };
  return { ...base, text: describeSpecEdit(parsed.value), patch: parsed.value.patch };
}
