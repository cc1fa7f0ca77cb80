/** A process's stderr as failure reasons show it (`stderrSuffix`): its last lines, untrusted text made safe. */
import { stripControls } from './terminal';

/** Lines of stderr kept, and their length together. */
export const STDERR_LINES = 5;
export const STDERR_CHARS = 400;

/** The last non-empty lines of `text`, controls stripped, joined with " | ", at most STDERR_CHARS long. */
export function stderrLines(
  text: string | null | undefined,
  lines = STDERR_LINES,
  chars = STDERR_CHARS,
): string {
  const kept = stripControls(text ?? '')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .slice(-lines)
    .join(' | ');
  return kept.length <= chars ? kept : `…${kept.slice(kept.length - chars + 1)}`;
}
