/**
 * Where the user sees an auto-picked [A] Review (both --autonomous and --quality-locked): its notice in the
 * output of `saga start --wait` and `saga continue` as it happens, and the latest one in `saga status`.
 */
import { autoPickNoticeFromLog } from '../domain/planning/auto-pick-notice';

/** The notices in `log` (newest first) not in `seen`, oldest first; each is added to `seen`. */
export function newAutoPickNotices(log: readonly string[], seen: Set<string>): string[][] {
  const fresh: string[][] = [];
  for (const line of [...log].reverse()) {
    const notice = autoPickNoticeFromLog(line);
    if (!notice || seen.has(line)) continue;
    seen.add(line);
    fresh.push(notice);
  }
  return fresh;
}

/** `saga status`: the newest notice in the recent log, and the checkpoints of the earlier ones. */
export function autoPickStatusLines(log: readonly string[]): string[] {
  const notices = log.map(autoPickNoticeFromLog).filter((n): n is string[] => n !== null);
  if (!notices.length) return [];
  const checkpoint = (n: string[]) => / at the (.*) checkpoint\.$/.exec(n[0]!)?.[1] ?? '?';
  const earlier = notices.slice(1).map(checkpoint);
  return [
    ...notices[0]!,
    ...(earlier.length ? [`  Also auto-picked earlier at: ${[...new Set(earlier)].join(', ')}`] : []),
  ];
}
