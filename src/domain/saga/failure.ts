/**
 * The one-line reason a failure gives people (`saga status`, PROGRESS.md, escalations). Temporal wraps a
 * failure at every hop (child workflow → activity → the application's own error), and the outer messages
 * ("Child Workflow execution failed", "Activity task failed") say nothing about the cause.
 */

/** Longest reason shown; the full failure stays in the workflow's history. */
export const FAILURE_REASON_MAX = 300;

/** The innermost non-empty message of `error`'s cause chain, on one line, at most FAILURE_REASON_MAX long. */
export function failureReason(error: unknown): string {
  let message = '';
  const seen = new Set<unknown>();
  for (let current: unknown = error; current !== undefined && current !== null;) {
    if (seen.has(current)) break; // a cause cycle
    seen.add(current);
    if (typeof current !== 'object') {
      message = String(current);
      break;
    }
    const own = (current as { message?: unknown }).message;
    if (typeof own === 'string' && own.trim()) message = own;
    current = (current as { cause?: unknown }).cause;
  }
  return oneLine(message || 'unknown failure');
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= FAILURE_REASON_MAX ? flat : `${flat.slice(0, FAILURE_REASON_MAX - 1)}…`;
}
