/**
 * Which tasks a failed milestone validation points at (docs/PROCEDURE.md §4.4): only those are
 * re-delegated, the others stay passed and are merged again as they are. Pure, for workflow code.
 *
 * Rules, per failing check, first that picks any task wins:
 *  1. files named in the check's output that a task owns (`owns` globs) or changed;
 *  2. files named in the check's command, the same way (a command names what it runs, less precisely);
 *  3. the check is one the task declared as its own validation;
 * and when no failing check points at any task, every task is re-delegated.
 */

/** A milestone check that failed on the integration branch. */
export interface FailedCheck {
  check: string;
  /** The end of its output (a tail is enough for stack traces and failure summaries). */
  output: string;
  /** Paths found in its whole output by the activity that ran it (`namedPathsIn`), when it looked. */
  namedPaths?: readonly string[];
}

/** A task that was merged for this integration. */
export interface SuspectTask {
  ref: string;
  owns: readonly string[];
  /** The commands of its own validation checks. */
  checks: readonly string[];
  changedFiles: readonly string[];
}

export type BlameRule = 'named-in-output' | 'named-in-command' | 'own-check' | 'every-task';

export interface BlamedTask {
  ref: string;
  /** Why this task, e.g. "owns src/theme.ts, named in the output of 'npm test'". */
  reasons: string[];
}

export interface Blame {
  /** The rules that chose the tasks (one per failing check that pointed anywhere), or `every-task`. */
  rules: BlameRule[];
  /** In the order the tasks were given. */
  tasks: BlamedTask[];
}

/** Most paths kept from one output: enough for a failure summary, small enough for history. */
export const NAMED_PATHS_MAX = 100;

/** Lines that report a pass (jest, TAP, node:test, mocha): a file named there is not to blame. */
const PASSING_LINE = /^\s*(PASS|ok|\u2713|\u2714)\s/; // ✓ ✔ (escaped: the CLI bundle stays ASCII)
const PATH_CHARS = /[A-Za-z0-9_@.+~/-]+/g;

/**
 * Path-like words of a text (`src/theme.ts` of `src/theme.ts:12:5`, absolute paths too), in order of first
 * appearance, skipping lines that report a pass. A word is a path when it has a `/` or a file extension.
 */
export function namedPathsIn(text: string, max = NAMED_PATHS_MAX): string[] {
  const found = new Set<string>();
  for (const line of text.split(/\r?\n|\r/)) {
    if (PASSING_LINE.test(line)) continue;
    for (const word of line.match(PATH_CHARS) ?? []) {
      const path = word.replace(/^(\.\/)+/, '').replace(/[.]+$/, '');
      if (!looksLikePath(path)) continue;
      found.add(path);
      if (found.size >= max) return [...found];
    }
  }
  return [...found];
}

function looksLikePath(word: string): boolean {
  if (word.replace(/\//g, '') === '') return false;
  if (word.includes('/')) return /[A-Za-z]/.test(word);
  // A bare file name: an extension with a letter (not `1.2` or a version number).
  return /^[^.]+(\.[A-Za-z0-9_-]*[A-Za-z][A-Za-z0-9_-]*)+$/.test(word) && !/^v?\d/.test(word);
}

/** The tasks a milestone validation failure points at, and why; every task when nothing points anywhere. */
export function tasksToRedelegate(failures: readonly FailedCheck[], tasks: readonly SuspectTask[]): Blame {
  const reasons = new Map<string, string[]>();
  const rules: BlameRule[] = [];
  const blame = (ref: string, reason: string) => {
    const list = reasons.get(ref) ?? [];
    if (!list.includes(reason)) list.push(reason);
    reasons.set(ref, list);
  };
  for (const failure of failures) {
    const name = `'${failure.check}'`;
    const inOutput = filesNamed(tasks, [...(failure.namedPaths ?? []), ...namedPathsIn(failure.output)]);
    if (inOutput.size > 0) {
      rules.push('named-in-output');
      for (const [ref, why] of inOutput) blame(ref, `${why}, named in the output of ${name}`);
      continue;
    }
    const inCommand = filesNamed(tasks, namedPathsIn(failure.check));
    if (inCommand.size > 0) {
      rules.push('named-in-command');
      for (const [ref, why] of inCommand) blame(ref, `${why}, named in the command ${name}`);
      continue;
    }
    const owners = tasks.filter((t) => t.checks.some((c) => sameCommand(c, failure.check)));
    if (owners.length > 0) {
      rules.push('own-check');
      for (const t of owners) blame(t.ref, `declared ${name} as its own check`);
    }
  }
  if (reasons.size === 0) return everyTask(tasks);
  return {
    rules: [...new Set(rules)],
    tasks: tasks.filter((t) => reasons.has(t.ref)).map((t) => ({ ref: t.ref, reasons: reasons.get(t.ref)! })),
  };
}

/** The fallback: every task, because nothing in the failure points at one. */
export function everyTask(tasks: readonly Pick<SuspectTask, 'ref'>[]): Blame {
  return {
    rules: ['every-task'],
    tasks: tasks.map((t) => ({
      ref: t.ref,
      reasons: ["nothing in the failure names one task's files or checks"],
    })),
  };
}

/** Per task pointed at: "owns a, b" or "changed c" (owned files first). */
function filesNamed(tasks: readonly SuspectTask[], paths: readonly string[]): Map<string, string> {
  const named = new Map<string, string>();
  for (const task of tasks) {
    const owned = new Set<string>();
    const changed = new Set<string>();
    for (const path of paths) {
      const candidates = pathSuffixes(path);
      const ownedAs = candidates.find((c) => task.owns.some((pattern) => ownsPath(pattern, c)));
      if (ownedAs !== undefined) owned.add(ownedAs);
      else {
        const changedAs = candidates.find((c) => task.changedFiles.includes(c));
        if (changedAs !== undefined) changed.add(changedAs);
      }
    }
    const parts = [
      ...(owned.size ? [`owns ${[...owned].join(', ')}`] : []),
      ...(changed.size ? [`changed ${[...changed].join(', ')}`] : []),
    ];
    if (parts.length) named.set(task.ref, parts.join('; '));
  }
  return named;
}

/**
 * A named path and its tails at `/` boundaries, longest first: an absolute path
 * (`/tmp/wt/src/theme.ts`) or one relative to another folder still names the repo's `src/theme.ts`.
 */
function pathSuffixes(path: string): string[] {
  const segments = path.split('/').filter((s) => s !== '' && s !== '.' && s !== '..');
  return segments.map((_, i) => segments.slice(i).join('/'));
}

/** Whether an `owns` entry (a path, a folder, or a glob) covers a repo-relative file. */
export function ownsPath(pattern: string, file: string): boolean {
  const entry = pattern
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
  if (entry === '') return true;
  if (!/[*?[\]{}]/.test(entry)) return file === entry || file.startsWith(`${entry}/`);
  return globRegExp(entry).test(file);
}

function globRegExp(glob: string): RegExp {
  let source = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '{') {
      braces++;
      source += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      source += ')';
    } else if (c === ',' && braces > 0) source += '|';
    else if (c === '[' || c === ']') source += c;
    else source += c.replace(/[.+^$()|\\]/g, '\\$&');
  }
  // A glob that names a folder (`src/theme*`) covers what is inside it too.
  return new RegExp(`^${source}(?:/.*)?$`);
}

const sameCommand = (a: string, b: string) => a.trim().replace(/\s+/g, ' ') === b.trim().replace(/\s+/g, ' ');

/** "1.3 (owns src/theme.ts, named in the output of 'npm test')" for the log line. */
export function describeBlame(blame: Blame): string {
  if (blame.rules.includes('every-task')) {
    const refs = blame.tasks.map((t) => t.ref).join(', ');
    return `every task (${refs}): ${blame.tasks[0]?.reasons[0] ?? 'no task to point at'}`;
  }
  return blame.tasks.map((t) => `${t.ref} (${t.reasons.join('; ')})`).join(', ');
}

/**
 * A task integration sends back. `note`: why, in one line (the task's status reason); `details`: more for
 * the agent (the failing checks' output). `rebaseOnto`: the task's branch is moved to this commit (the
 * integrated state) before it is redone.
 */
export type Redelegation = {
  ref: string;
  evidence: string[];
  note: string;
  details?: string[];
  rebaseOnto?: string;
};

/** Tasks whose merge conflicted, redone on top of what merged cleanly (`head`). */
export const conflictRedelegations = (
  conflicted: readonly { ref: string; files: string[] }[],
  head: string,
): Redelegation[] =>
  conflicted.map((c) => ({
    ref: c.ref,
    evidence: [],
    rebaseOnto: head,
    note: `Your branch conflicted with the integration branch in ${c.files.join(', ')}; redo the task on top of the integrated state.`,
  }));

/** A failed milestone check as run on the integration branch (the fields the re-delegation tells). */
export interface MilestoneCheckResult {
  text: string;
  check: string;
  exitCode: number | null;
  timedOut: boolean;
  outputPath: string;
  tail: string;
  namedPaths?: string[];
}

/** The blamed tasks of a failed milestone validation, each with every failing check's output. */
export function validationRedelegations(
  milestone: number,
  failures: readonly MilestoneCheckResult[],
  blame: Blame,
): Redelegation[] {
  const failed = failures.map((f) => `${f.text} (\`${f.check}\`)`).join('; ');
  const outputs = failures.map(
    (f) =>
      `Output of \`${f.check}\` (${f.timedOut ? 'timed out' : `exit ${f.exitCode}`}), last lines:\n${f.tail}`,
  );
  return blame.tasks.map(({ ref, reasons }) => ({
    ref,
    evidence: failures.map((f) => f.outputPath),
    note: `Milestone ${milestone} validation failed after integration: ${failed}. It points at this task: ${reasons.join('; ')}.`,
    details: outputs,
  }));
}
