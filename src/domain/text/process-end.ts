/**
 * How a process (an agent, a planner, a reviewer, a check) ended, in words people see: its exit status (or
 * signal, timeout, hang) and the last lines it wrote to stderr, where a crash says why ("Cannot find module
 * …", "EROFS: read-only file system …"). Workflows import this: the stderr text comes already made one line,
 * capped and stripped of terminal controls by the activity that ran the process (`stderrLines`).
 */

/** What the words are made from (an agent run's result, or a check's). */
export interface ProcessEnd {
  exitCode: number | null;
  signal?: string | null;
  timedOut?: boolean;
  idle?: boolean;
  cancelled?: boolean;
  /** The end of the process's stderr (absent from results written before it was kept). */
  stderrTail?: string | null;
}

/** "exit status 1", "killed by SIGKILL", "timed out", "hung (printed nothing for too long)". */
export function exitStatus(end: ProcessEnd): string {
  if (end.timedOut) return 'timed out';
  if (end.idle) return 'hung (printed nothing for too long)';
  if (end.cancelled) return 'cancelled';
  if (end.exitCode !== null) return `exit status ${end.exitCode}`;
  return end.signal ? `killed by ${end.signal}` : 'exit status unknown';
}

/** A write the sandbox refused: the folder is outside what a confined process may write. */
const READ_ONLY = /\bEROFS\b|read-only file system/i;
export const READ_ONLY_HINT = 'the sandbox allows writes only in the worktree (and the run files it names)';

/** "; stderr: Error: Cannot find module './lib.js' | …", to follow a status; empty without stderr. */
export function stderrSuffix(end: Pick<ProcessEnd, 'stderrTail'>): string {
  const stderr = (end.stderrTail ?? '').split('\n').join(' ').trim();
  if (!stderr) return '';
  return `; stderr: ${stderr}${READ_ONLY.test(stderr) ? ` (${READ_ONLY_HINT})` : ''}`;
}

/** "exit status 1; stderr: Error: Cannot find module './lib.js' | …" (no stderr: the status alone). */
export const processEndWhy = (end: ProcessEnd): string => `${exitStatus(end)}${stderrSuffix(end)}`;
