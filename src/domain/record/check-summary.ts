/**
 * A check's result in one line, from its output: the test runner's own summary when it printed one (TAP's
 * `# pass`/`# fail`, Jest's `Tests:`, pytest's `N passed in`, mocha's `N passing`, cargo's `test result:`,
 * go's `ok`/`FAIL`), else the last line that is neither blank nor a `#` comment (timings like
 * `# duration_ms 123.8` say nothing about the result). Pure.
 */

/** Lines a runner prints as its verdict (checked from the end of the output). */
const SUMMARY_PATTERNS = [
  /^Tests?:\s+\d+/i, // jest, vitest
  /^test result:/i, // cargo
  /^=+ .*\b\d+ (passed|failed|errors?)\b.* =+$/, // pytest
  /^\d+ (passing|failing|pending)\b/, // mocha
  /^(ok|FAIL|PASS)\s/, // go test
  /\b\d+ (tests? )?(passed|failed)\b/i,
];

const TAP_COUNT = /^# (pass|fail) \d+$/;

/** The meaningful result line of a check's output (without the `$ command` header), or ''. */
export function checkResultLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const tap = lines.filter((l) => TAP_COUNT.test(l));
  if (tap.length) return tap.slice(-2).join(', ');
  for (let i = lines.length - 1; i >= 0; i--)
    if (SUMMARY_PATTERNS.some((p) => p.test(lines[i]!))) return lines[i]!;
  return [...lines].reverse().find((l) => !l.startsWith('#')) ?? lines[lines.length - 1] ?? '';
}
