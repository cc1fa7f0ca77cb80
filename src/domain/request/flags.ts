import { z } from 'zod';
import { FlagsResultSchema, type FlagsResult } from '../contract/flags-result';
import { PYTHON_WHITESPACE, pythonStrip } from '../text/python-whitespace';

/**
 * The flags contract (README, Real use; docs/ARCHITECTURE.md, Contracts). Pure: imported by workflow code.
 *
 * Parity matters more than taste here: the same arguments must give the same JSON as the other
 * implementations of this contract (the Python reference parser; docs/PROCEDURE.md §10.5), so whitespace, error texts and key order follow it.
 */

/**
 * The flag vocabulary, in ONE place: every flag spelling, the config keys, the error texts and the
 * result keys derive from it, so adding a flag cannot half-work.
 */
export const FLAG_VOCABULARY = {
  keys: ['quality_locked', 'autonomous', 'subagents', 'parallel'],
  /** The one flag that takes a value: `--parallel[=N]`, N being the lane cap. */
  valueFlagKey: 'parallel',
  defaultLanes: 2,
  maxLanes: 4,
} as const;

export type FlagKey = (typeof FLAG_VOCABULARY.keys)[number];
type FlagSource = 'flag' | 'config' | null;

export const FlagKeySchema = z.enum(FLAG_VOCABULARY.keys);

/** Config defaults: a key set to true turns that mode on when no flag mentions it. */
export type ConfigDefaults = Partial<Record<FlagKey, boolean>>;

/** `quality_locked` -> `--quality-locked`. */
export function flagName(key: FlagKey): string {
  return `--${key.replace(/_/g, '-')}`;
}

const POSITIVE_FLAGS = new Map<string, FlagKey>(FLAG_VOCABULARY.keys.map((k) => [flagName(k), k]));
const NEGATIVE_FLAGS = new Map<string, FlagKey>(
  FLAG_VOCABULARY.keys.map((k) => [`--no-${flagName(k).slice(2)}`, k]),
);
/** Sorted like the reference implementation so error texts match byte for byte. */
const SUPPORTED_FLAGS_TEXT = [...POSITIVE_FLAGS.keys(), ...NEGATIVE_FLAGS.keys()]
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  .join(', ');

const LEADING_WS = new RegExp(`^[${PYTHON_WHITESPACE}]+`);
const FIRST_WORD = new RegExp(`^[^${PYTHON_WHITESPACE}]+`);

/** Every mode off, no goal, the error set: the shape the contract demands on any failure. */
function errorResult(message: string): FlagsResult {
  return buildResult({}, '', message, null, null);
}

function buildResult(
  resolved: Partial<Record<FlagKey, { value: boolean; source: FlagSource }>>,
  goal: string,
  error: string | null,
  laneCap: number | null,
  laneNote: string | null,
): FlagsResult {
  const draft: Record<string, unknown> = { goal, error };
  for (const key of FLAG_VOCABULARY.keys) {
    draft[key] = resolved[key]?.value ?? false;
    draft[`${key}_source`] = resolved[key]?.source ?? null;
  }
  draft.parallel_lanes = draft.parallel ? (laneCap ?? FLAG_VOCABULARY.defaultLanes) : 0;
  draft.parallel_note = laneNote;
  // zod emits object keys in schema order: this is what pins the JSON to the contract order.
  return FlagsResultSchema.parse(draft);
}

/** Strip leading zeros the way int() formatting does ("05" -> "5"), without Number overflow. */
function canonicalDigits(digits: string): string {
  return digits.replace(/^0+(?=\d)/, '');
}

function laneCountOf(value: string): { cap: number; note: string | null } | { error: string } {
  const digits = /^[0-9]+$/.test(value) ? canonicalDigits(value) : null;
  if (digits === null || digits === '0') {
    return { error: `--parallel takes a lane count of 1 or more (got '${value}').` };
  }
  const max = FLAG_VOCABULARY.maxLanes;
  if (digits.length > String(max).length || Number(digits) > max) {
    return { cap: max, note: `--parallel=${digits} exceeds the hard cap; clamped to ${max}.` };
  }
  return { cap: Number(digits), note: null };
}

/**
 * Parse slash-command arguments: leading flags, then the goal. Precedence per mode:
 * `--no-X` / `--X` (source "flag") > config `X: true` (source "config") > off (source null).
 * Never throws: bad input comes back as a result with `error` set.
 */
export function parseFlags(argumentsText: string, defaults: ConfigDefaults): FlagsResult {
  const seen = new Map<FlagKey, 'positive' | 'negative'>();
  let laneCap: number | null = null;
  let laneNote: string | null = null;
  let remaining = pythonStrip(argumentsText ?? '');

  // Flags only count before the goal: parsing stops at the first word not starting with "--".
  while (remaining.startsWith('--')) {
    const token = (FIRST_WORD.exec(remaining) as RegExpExecArray)[0];
    remaining = remaining.slice(token.length).replace(LEADING_WS, '');
    const eq = token.indexOf('=');
    const base = eq === -1 ? token : token.slice(0, eq);
    const key = POSITIVE_FLAGS.get(base) ?? NEGATIVE_FLAGS.get(base);
    if (key === undefined) {
      return errorResult(`Unknown flag '${token}'. Supported flags: ${SUPPORTED_FLAGS_TEXT}.`);
    }
    if (eq !== -1) {
      if (base !== flagName(FLAG_VOCABULARY.valueFlagKey)) {
        return errorResult(`Flag '${base}' takes no value (got '${token}'); only --parallel=N does.`);
      }
      const lanes = laneCountOf(token.slice(eq + 1));
      if ('error' in lanes) return errorResult(lanes.error);
      if (laneCap === null) {
        // The first --parallel=N counts, and only its clamp note is kept.
        laneCap = lanes.cap;
        laneNote = lanes.note;
      }
    }
    const polarity = POSITIVE_FLAGS.has(base) ? 'positive' : 'negative';
    const earlier = seen.get(key);
    if (earlier !== undefined && earlier !== polarity) {
      const dash = flagName(key).slice(2);
      return errorResult(`Conflicting flags for ${key}: both --${dash} and --no-${dash} passed.`);
    }
    seen.set(key, polarity);
  }

  const resolved: Partial<Record<FlagKey, { value: boolean; source: FlagSource }>> = {};
  for (const key of FLAG_VOCABULARY.keys) {
    const polarity = seen.get(key);
    if (polarity !== undefined) resolved[key] = { value: polarity === 'positive', source: 'flag' };
    else if (defaults[key] === true) resolved[key] = { value: true, source: 'config' };
  }
  return buildResult(resolved, remaining, null, laneCap, laneNote);
}

/**
 * Read config defaults with the strict one-line contract: only a top-level line that is exactly
 * `<key>: true` counts (one space, lowercase, nothing after). Lines may end in LF, CRLF or CR.
 */
export function parseConfigDefaults(text: string | null): ConfigDefaults {
  const defaults: ConfigDefaults = {};
  if (!text) return defaults;
  const lines = new Set(text.split(/\r\n|\r|\n/));
  for (const key of FLAG_VOCABULARY.keys) {
    if (lines.has(`${key}: true`)) defaults[key] = true;
  }
  return defaults;
}

/**
 * JSON exactly as the reference tools print it (Python `json.dumps` defaults): `", "` and `": "`
 * separators, everything outside printable ASCII escaped as \uXXXX. Keys keep insertion order.
 */
export function toContractJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string') return quoteAscii(value);
  if (Array.isArray(value)) return `[${value.map(toContractJson).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${quoteAscii(k)}: ${toContractJson(v)}`).join(', ')}}`;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

function quoteAscii(text: string): string {
  // Iterating UTF-16 code units gives surrogate pairs as two \uXXXX escapes, as Python does.
  const escaped = text.replace(/["\\]|[^\x20-\x7e]/g, (ch) => {
    return SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `"${escaped}"`;
}
