/**
 * Issues reported at acceptance (docs/PROCEDURE.md §6.2, §6.3) and the checks that show each one fixed. Pure: the
 * interaction validator (CLI and chat answers) and the acceptance workflow share it.
 *
 * One issue per line of the answer's text, optionally with its check after a standalone `::`:
 *
 *     The greeting must be in French :: check: grep -q Bonjour greeting.txt
 *
 * The check is a command run in the fix task's checkout like every plan check (`/bin/sh -c`); exit 0 means
 * fixed. An issue without one is asked for one (or an explicit `none`: review only).
 */
export interface AcceptanceIssue {
  text: string;
  /** Null: review only (no check given, the user answered `none`). */
  check: string | null;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** How a user writes an issue with its check; shown in prompts and errors. */
export const ISSUE_SYNTAX_EXAMPLE = 'The greeting must be in French :: check: grep -q Bonjour greeting.txt';
/** The options of the follow-up question asked for an issue reported without a check. */
export const ISSUE_CHECK_OPTIONS = ['check', 'none'] as const;
/** More issues than this in one report is a list to split into rounds, not one focused round. */
export const MAX_ISSUES = 20;

/** A `::` after a space, before a space or `check:` (so `std::string` inside an issue is just text). */
const SEPARATOR = /(?:^|\s)::(?=\s|$|check\s*:)/i;
const CHECK_PREFIX = /^check\s*:/i;
/** Bullet markers people paste in front of list items. */
const BULLET = /^(?:[-*\u2022]|\d+[.)])(?:\s+|$)/; // • escaped: the CLI bundle stays ASCII

/** The issues of an acceptance report: one per non-blank line; names the line of the first problem. */
export function parseIssueLines(text: string | undefined): Parsed<AcceptanceIssue[]> {
  const lines = (text ?? '').split(/\r\n|\r|\n/);
  const issues: AcceptanceIssue[] = [];
  for (const [index, raw] of lines.entries()) {
    if (!raw.trim()) continue; // blank lines separate issues
    const where = `Issue line ${index + 1} ('${clip(raw.trim())}')`;
    const line = raw.trim().replace(BULLET, '');
    const separator = SEPARATOR.exec(line);
    const issue = (separator ? line.slice(0, separator.index) : line).trim();
    if (!issue) return { ok: false, error: `${where} has no issue text; write the issue before '::'.` };
    if (!separator) {
      issues.push({ text: issue, check: null });
      continue;
    }
    const after = line.slice(separator.index + separator[0].length).trim();
    if (!CHECK_PREFIX.test(after)) {
      return {
        ok: false,
        error: `${where}: after '::' write 'check: COMMAND', e.g. '${ISSUE_SYNTAX_EXAMPLE}'.`,
      };
    }
    const check = checkCommand(after.replace(CHECK_PREFIX, ''));
    if (!check.ok) return { ok: false, error: `${where}: ${check.error}` };
    issues.push({ text: issue, check: check.value });
  }
  if (!issues.length) {
    return {
      ok: false,
      error: `Report at least one issue, one per line, optionally with its check: '${ISSUE_SYNTAX_EXAMPLE}'.`,
    };
  }
  if (issues.length > MAX_ISSUES) {
    return {
      ok: false,
      error: `${issues.length} issues in one report; at most ${MAX_ISSUES} (report the rest in the next round).`,
    };
  }
  return { ok: true, value: issues };
}

/**
 * A check command as the user typed it, trimmed; refused when the shell could not parse it (an unclosed
 * quote, a dangling operator), since a check that cannot run would block the fix for the wrong reason.
 */
export function checkCommand(text: string | undefined): Parsed<string> {
  const command = (text ?? '').trim();
  if (!command)
    return { ok: false, error: 'the check is empty; give a command that exits 0 once it is fixed.' };
  if (/[\0\n\r]/.test(command)) return { ok: false, error: 'the check must be one line.' };
  const problem = shellSyntaxProblem(command);
  return problem
    ? { ok: false, error: `the check \`${command}\` ${problem}.` }
    : { ok: true, value: command };
}

/** What keeps `sh -c` from parsing the command, as far as quoting and trailing operators go; null if fine. */
function shellSyntaxProblem(command: string): string | null {
  let quote: "'" | '"' | '`' | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (c === '\\') {
      if (i === command.length - 1) return 'ends with a lone backslash';
      i++;
    } else if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
  }
  if (quote)
    return `has an unclosed ${quote === "'" ? 'single quote' : quote === '"' ? 'double quote' : 'backquote'}`;
  if (/(?:\|\||&&|\|)\s*$/.test(command)) return 'ends with an operator and nothing after it';
  if (/^(?:\||&|;)/.test(command)) return 'starts with an operator';
  return null;
}

const clip = (text: string, max = 60): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
