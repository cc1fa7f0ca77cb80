/**
 * The notice printed in place of an approval checkpoint's prompt when both --autonomous and --quality-locked
 * pick [A] Review (docs/PROCEDURE.md §9.9; its lines: Reason / Logged to / Override). The
 * workflow logs it as one line (the progress log, PROGRESS.md); the CLI shows it as the block it is. Pure.
 */
import type { FlagsResult } from '../contract/flags-result';

const LEAD = 'Saga: Auto-proceeding with [A] Review';
const PARTS = ['Reason', 'Logged to', 'Override'] as const;
const AUTO_PICK_FLAGS = ['quality_locked', 'autonomous'] as const;
const flagName = (key: string) => `--${key.replace('_', '-')}`;

/** How to turn each of the two flags off, by where it came from ("config" or "flag"); inactive ones add nothing. */
export function autoPickOverrideHints(flags: FlagsResult): string[] {
  return AUTO_PICK_FLAGS.map((k) => {
    const source = flags[`${k}_source`];
    if (source === 'config')
      return `pass --no-${k.replace('_', '-')} to opt out of the .sage/config.yaml default for one run`;
    if (source === 'flag') return `omit ${flagName(k)} to disable the flag`;
    return null;
  }).filter((hint): hint is string => hint !== null);
}

/** The notice's lines, as the terminal shows them. */
export function autoPickNotice(input: {
  name: string;
  sagaDir: string;
  checkpoint: string;
  flags: FlagsResult;
}): string[] {
  const hints = autoPickOverrideHints(input.flags);
  return [
    `${LEAD} at the ${input.checkpoint} checkpoint.`,
    `  Reason: --autonomous --quality-locked both active. [A] is the only option consistent with both flags.`,
    `  Logged to: ${input.sagaDir}/manifest.md (auto_picked_checkpoints) and decisions.md`,
    `  Override: interrupt this saga (saga cancel ${input.name}) and re-run without one of the flags` +
      (hints.length ? ` (${hints.join('; ')}).` : '.'),
  ];
}

/** The notice as the one log line the workflow keeps. */
export const autoPickLogLine = (input: Parameters<typeof autoPickNotice>[0]): string =>
  autoPickNotice(input)
    .map((line) => line.trim())
    .join(' ');

const NOTICE_LINE = new RegExp(`^(?:\\S+ )?(${LEAD.replace(/[[\]]/g, '\\$&')} at the .*)$`);

/** The notice's lines from its log line (with or without the log's leading time); null for any other line. */
export function autoPickNoticeFromLog(logLine: string): string[] | null {
  const line = NOTICE_LINE.exec(logLine)?.[1];
  if (!line) return null;
  return line.split(new RegExp(` (?=(?:${PARTS.join('|')}): )`)).map((l, i) => (i ? `  ${l}` : l));
}
