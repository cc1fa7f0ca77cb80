/**
 * Caps on what workflow state and payloads hold: a list of paths or a log line comes from an agent's or
 * git's output, and one that grows with the repo would reach Temporal's payload limit (2 MB; the SDK warns
 * at 512 KB). The full lists stay where they came from (git, the run's files); state keeps the first part.
 */

/** At most this many entries, and this many bytes of them, in a list kept in state or a payload. */
export const LIST_CAP = { count: 200, bytes: 16_384 } as const;

/** One log line's longest form in state (PROGRESS.md's log keeps what the workflow kept). */
export const LINE_CAP = 2_000;

/** UTF-8 length, counted by hand: workflow code has no Buffer. */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** The first entries of `items` within the count and byte caps (an entry over the byte cap alone is cut). */
export function cappedList(
  items: readonly string[],
  cap: { count: number; bytes: number } = LIST_CAP,
): string[] {
  const kept: string[] = [];
  let bytes = 0;
  for (const item of items) {
    if (kept.length >= cap.count) break;
    const entry = cappedLine(item, cap.bytes);
    bytes += utf8Bytes(entry);
    if (bytes > cap.bytes && kept.length > 0) break;
    kept.push(entry);
  }
  return kept;
}

/** `line` cut to `max` characters, saying how much was left out. */
export function cappedLine(line: string, max = LINE_CAP): string {
  if (line.length <= max) return line;
  const note = ` … (${line.length - max} more characters)`;
  return `${line.slice(0, Math.max(0, max - note.length))}${note}`;
}
