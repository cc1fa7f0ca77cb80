/**
 * The saga's whole log and the notes PROGRESS.md derives from it (pure). The workflow keeps only its most
 * recent log lines (newest first) so its state and status query stay small; the projection activity merges
 * each such window into the full log it keeps on disk, oldest first.
 */
import type { SagaStatus } from '../contract/state';

/** Log lines start with the workflow time: `2026-05-15T14:23:18.000Z text`. */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z /;

/** The text of a log line without its timestamp. */
export const logText = (line: string): string => line.replace(TIMESTAMP, '');

/** How far back the merge looks for the window's place in the recorded log (bounds the work per write). */
const MAX_ALIGN_SCAN = 5000;

export const LOG_GAP_MARKER =
  '(some log lines are missing here: more happened between two writes of PROGRESS.md than the saga keeps)';

/**
 * The full log, oldest first: `recorded` (oldest first, from disk) extended by the lines of the workflow's
 * recent window (`recentNewestFirst`, as `status.log` holds it) that it does not have yet. The window is
 * placed where its start lines up with the recorded tail (lines carry timestamps, so a match is the same
 * line); a window that shares lines with the tail adds the lines it does not have; one that lines up nowhere
 * is appended whole, after a marker when lines may have been lost.
 */
export function mergeLog(recorded: string[], recentNewestFirst: string[]): string[] {
  const window = [...recentNewestFirst].reverse();
  if (!window.length) return recorded;
  for (let i = Math.max(0, recorded.length - MAX_ALIGN_SCAN); i < recorded.length; i++) {
    const overlap = Math.min(recorded.length - i, window.length);
    let aligned = true;
    for (let j = 0; j < overlap && aligned; j++) aligned = recorded[i + j] === window[j];
    if (aligned) return overlap === window.length ? recorded : [...recorded, ...window.slice(overlap)];
  }
  // The saga's and its implementation phase's lines are merged by time, so a line can appear between two
  // already recorded (its workflow task ended after the other's newer line was read): it goes in at its time.
  const tail = new Set(recorded.slice(-(MAX_ALIGN_SCAN + window.length)));
  const fresh = window.filter((line) => !tail.has(line));
  if (fresh.length === window.length)
    return [...recorded, ...(recorded.length ? [LOG_GAP_MARKER] : []), ...window];
  if (!fresh.length) return recorded;
  const merged = [...recorded];
  for (const line of fresh) insertByTime(merged, line);
  return merged;
}

const stampOf = (line: string): string | null => TIMESTAMP.exec(line)?.[0] ?? null;

/**
 * Puts `line` after the last of the recent lines (oldest first) that is not newer than it: lines with the
 * same time keep the order they came in. The search stops at a line without a time (the gap marker).
 */
function insertByTime(lines: string[], line: string): void {
  const stamp = stampOf(line);
  const floor = Math.max(0, lines.length - MAX_ALIGN_SCAN);
  let at = lines.length;
  // ISO times of one format compare as strings.
  while (stamp && at > floor && (stampOf(lines[at - 1]!) ?? '') > stamp) at--;
  lines.splice(at, 0, line);
}

/** Log lines whose text starts with `prefix`, newest first (the log is given oldest first). */
export const prefixedLines = (logOldestFirst: string[], prefix: string): string[] =>
  logOldestFirst.filter((l) => logText(l).startsWith(prefix)).reverse();

/** The entry headings of decisions.md (`### YYYY-MM-DD HH:MM — title`), in file order (newest first). */
export function decisionHeadings(decisionsMd: string): string[] {
  return [...decisionsMd.matchAll(/^### (.+)$/gm)].map((m) => m[1]!.trim());
}

/** PROGRESS.md "Decisions & Deviations": deviations from the log, then decisions.md entries, newest first. */
export function decisionNotes(logOldestFirst: string[], decisionsMd: string | null): string[] {
  return [
    ...prefixedLines(logOldestFirst, 'Deviation: '),
    ...decisionHeadings(decisionsMd ?? '').map((h) => `Decision ${h} (decisions.md)`),
  ];
}

const RESOLVED = /^Resolver fixed the conflict of (\d+)\.(\d+)$/;
const UNRESOLVED = /^Resolver could not fix (\d+)\.(\d+) /;

/**
 * PROGRESS.md "Integration notes": each milestone that reached integration (its commit, the tasks delegated
 * more than once, merge conflicts the resolver fixed or not), then the log's `Integration: ` lines.
 */
export function integrationNotes(status: SagaStatus, logOldestFirst: string[]): string[] {
  const texts = logOldestFirst.map(logText);
  const refsOf = (pattern: RegExp, milestone: number) =>
    texts.flatMap((t) => {
      const m = pattern.exec(t);
      return m && Number(m[1]) === milestone ? [`${m[1]}.${m[2]}`] : [];
    });
  const perMilestone = status.milestones.flatMap((m) => {
    const redelegated = m.tasks.filter((t) => t.delegations > 1);
    const resolved = refsOf(RESOLVED, m.id);
    const unresolved = refsOf(UNRESOLVED, m.id);
    const reached = m.status === 'integrated' || m.status === 'integrating' || m.status === 'failed';
    if (!reached && !m.integrationCommit && !redelegated.length && !resolved.length && !unresolved.length)
      return [];
    const parts = [
      `Milestone ${m.id} (${m.title}): ${m.status}`,
      m.integrationCommit
        ? `integration commit ${m.integrationCommit.slice(0, 12)}`
        : 'no integration commit',
      redelegated.length
        ? `re-delegated ${redelegated.map((t) => `${t.id} (${t.delegations} delegations)`).join(', ')}`
        : 'no re-delegations',
      resolved.length ? `conflicts resolved: ${resolved.join(', ')}` : 'no conflicts resolved',
    ];
    if (unresolved.length) parts.push(`conflicts left to redo: ${unresolved.join(', ')}`);
    return [parts.join(' · ')];
  });
  return [...perMilestone, ...prefixedLines(logOldestFirst, 'Integration: ')];
}
