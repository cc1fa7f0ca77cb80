/**
 * The answers an implementer offers with its spec gap (templates/implementer.md: `"options": [...]`,
 * `"recommended": <index>` next to the blocked reason), and the question they become: a spec gap
 * is asked with options, the recommended one marked (docs/PROCEDURE.md §3.11). The agent's text is untrusted: options
 * are cut to a few short lines without control characters, and each is labelled by the saga ([A], [B]...)
 * so it can never pose as one of the saga's own answers. Pure.
 */
import { oneTerminalLine } from '../text/terminal';

/** At most this many options are kept, and this many characters of each (a chat button shows ~75). */
export const GAP_OPTIONS_MAX = 4;
export const GAP_OPTION_CHARS = 120;

/** The options a blocked report offers, labelled, and the index of the recommended one (null: none). */
export interface GapOptions {
  options: string[];
  recommended: number | null;
}

const LABELS = ['A', 'B', 'C', 'D'] as const;

const clean = (text: string): string => {
  const line = oneTerminalLine(text).replace(/\s+/g, ' ').trim();
  return line.length <= GAP_OPTION_CHARS ? line : `${line.slice(0, GAP_OPTION_CHARS - 1)}…`;
};

/** The options of a blocked report (labelled "[A] ..."), or null when it offers none that can be shown. */
export function gapOptionsOf(report: Record<string, unknown> | null | undefined): GapOptions | null {
  if (!report || !Array.isArray(report.options)) return null;
  const kept: { text: string; from: number }[] = [];
  report.options.forEach((option: unknown, from) => {
    if (typeof option !== 'string' || kept.length >= GAP_OPTIONS_MAX) return;
    const text = clean(option);
    if (text && !kept.some((k) => k.text.toLowerCase() === text.toLowerCase())) kept.push({ text, from });
  });
  if (!kept.length) return null;
  const wanted = report.recommended;
  const recommended = Number.isInteger(wanted) ? kept.findIndex((k) => k.from === wanted) : -1;
  return {
    options: kept.map((k, i) => `[${LABELS[i]}] ${k.text}`),
    recommended: recommended >= 0 ? recommended : null,
  };
}

/** The agent's option without the saga's label: what the user chose, as the clarification. */
export const gapOptionText = (option: string): string => option.replace(/^\[[A-D]\] /, '');

/** How the question names the agent's options and its recommendation. */
export function gapOptionsSentence(gap: GapOptions): string {
  const keys = gap.options.map((o) => o.slice(0, 3));
  const range = keys.length > 1 ? `${keys[0]}–${keys[keys.length - 1]}` : keys[0];
  const recommended = gap.recommended !== null ? `; it recommends ${keys[gap.recommended]}` : '';
  return (
    `Its agent offers ${keys.length} option(s) (${range}${recommended}): pick one (a note in --text is ` +
    `added to it), or answer 'answer' with your own clarification in --text. Either way`
  );
}
