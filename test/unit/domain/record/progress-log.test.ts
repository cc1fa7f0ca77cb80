/** The whole saga log kept from the workflow's recent windows (src/domain/record/progress-log.ts). */
import { LOG_GAP_MARKER, decisionNotes, logText, mergeLog } from '../../../../src/domain/record/progress-log';

const at = (n: number) => `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z line ${n}`;
/** The workflow's window after `last` lines, keeping `keep`: newest first. */
const window = (last: number, keep: number) =>
  Array.from({ length: Math.min(last, keep) }, (_, i) => at(last - i));

describe('mergeLog', () => {
  test('windows that overlap the recorded log add only their new lines; a repeat adds nothing', () => {
    let log: string[] = [];
    for (const last of [3, 5, 8, 11, 12]) log = mergeLog(log, window(last, 4));
    expect(log).toEqual(Array.from({ length: 12 }, (_, i) => at(i + 1)));
    expect(mergeLog(log, window(12, 4))).toBe(log);
    // A stale window (an older status) is already recorded: nothing is added.
    expect(mergeLog(log, window(8, 4))).toBe(log);
  });

  test('a window that lines up nowhere is appended after a marker saying lines may be missing', () => {
    const log = mergeLog(window(3, 10).reverse(), window(20, 4));
    expect(log).toEqual([at(1), at(2), at(3), LOG_GAP_MARKER, at(17), at(18), at(19), at(20)]);
  });
});

test('decisionNotes: deviation lines newest first, then decisions.md headings', () => {
  const log = [at(1), `${at(2).slice(0, 25)}Deviation: first`, `${at(3).slice(0, 25)}Deviation: second`];
  expect(logText(log[1]!)).toBe('Deviation: first');
  const md =
    '# Decisions\n\n### 2026-01-02 10:00 — b answered q2: y\n- x\n\n### 2026-01-01 09:00 — a answered q1: x\n';
  expect(decisionNotes(log, md)).toEqual([
    log[2],
    log[1],
    'Decision 2026-01-02 10:00 — b answered q2: y (decisions.md)',
    'Decision 2026-01-01 09:00 — a answered q1: x (decisions.md)',
  ]);
});

test('mergeLog: a line that appears between two recorded ones (merged by time) goes in at its time, once', () => {
  const recorded = [at(1), at(2), at(4)];
  // The next window has line 3, recorded later than line 4 was.
  expect(mergeLog(recorded, [at(5), at(4), at(3), at(2)])).toEqual([at(1), at(2), at(3), at(4), at(5)]);
  expect(mergeLog([at(1), at(2), at(3), at(4), at(5)], [at(5), at(4), at(3), at(2)])).toEqual([
    at(1),
    at(2),
    at(3),
    at(4),
    at(5),
  ]);
  // Lines of the same time keep the order they came in; the search stops at the gap marker.
  const same = `${at(4).slice(0, 25)}same time`;
  expect(mergeLog([at(1), at(4), at(6)], [at(6), same, at(4)])).toEqual([at(1), at(4), same, at(6)]);
  expect(mergeLog([at(1), LOG_GAP_MARKER, at(6)], [at(6), at(2)])).toEqual([
    at(1),
    LOG_GAP_MARKER,
    at(2),
    at(6),
  ]);
});
