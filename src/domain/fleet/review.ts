import { z } from 'zod';
import { PYTHON_WHITESPACE, pythonStrip } from '../text/python-whitespace';

/**
 * Quality-locked review decisions (`--quality-locked`, the flags contract): classify reviewer findings into counts, then
 * decide PASS / REVISE / CAP_REACHED / ESCALATE. Pure; matches the reference tool's behaviour.
 */

export const ReviewCountsSchema = z.object({
  critical: z.number().int().nonnegative(),
  major: z.number().int().nonnegative(),
  substantive: z.number().int().nonnegative(),
  cosmetic: z.number().int().nonnegative(),
});
export type ReviewCounts = z.infer<typeof ReviewCountsSchema>;
type Severity = keyof ReviewCounts;

export const ReviewActionSchema = z.enum(['PASS', 'REVISE', 'CAP_REACHED', 'ESCALATE']);
export type ReviewAction = z.infer<typeof ReviewActionSchema>;

/** One earlier iteration as the history JSON carries it; only `counts` matters to the decision. */
export const IterationRecordSchema = z
  .object({
    iteration: z.number().int().optional(),
    counts: ReviewCountsSchema.partial().passthrough().optional(),
    result: z.string().optional(),
  })
  .passthrough();
export type IterationRecord = z.infer<typeof IterationRecordSchema>;
export const ReviewHistorySchema = z.array(IterationRecordSchema, {
  invalid_type_error: 'history must be a JSON array',
});

export const QualityDecisionSchema = z.object({
  counts: ReviewCountsSchema,
  is_clean: z.boolean(),
  cap_reached: z.boolean(),
  stuck: z.boolean(),
  action: ReviewActionSchema,
  iteration_record: z.object({
    iteration: z.number().int(),
    counts: ReviewCountsSchema,
    result: ReviewActionSchema,
  }),
});
export type QualityDecision = z.infer<typeof QualityDecisionSchema>;

export const ITERATION_CAP = 10;
/** Consecutive history records with the same non-zero critical+major total that mean "stuck". */
export const STUCK_THRESHOLD = 3;

// Hyphenated forms first, so `MINOR-substantive:` is never read as something shorter.
const HEADERS: ReadonlyArray<[RegExp, Severity]> = [
  ['MINOR-substantive', 'substantive'],
  ['MINOR-cosmetic', 'cosmetic'],
  ['SUGGESTION-substantive', 'substantive'],
  ['SUGGESTION-cosmetic', 'cosmetic'],
  ['CRITICAL', 'critical'],
  ['MAJOR', 'major'],
  ['WARNING', 'major'],
].map(([name, severity]) => [new RegExp(`^${name}[${PYTHON_WHITESPACE}]*:`, 'iu'), severity as Severity]);

const ZERO_TOKENS = new Set(['none', '[none]', '[]', '0']);
const BULLET = new RegExp(`^[${PYTHON_WHITESPACE}]*(- |\\* |• )`);
const INLINE_ITEM_SEPARATOR = new RegExp(
  `,[${PYTHON_WHITESPACE}]*-[${PYTHON_WHITESPACE}]*|^-[${PYTHON_WHITESPACE}]*`,
);
/** Python's `str.splitlines()` boundaries. */
// eslint-disable-next-line no-control-regex -- the file/group/record separators are line breaks to Python
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

function matchHeader(line: string): { severity: Severity; rest: string } | null {
  for (const [pattern, severity] of HEADERS) {
    const match = pattern.exec(line);
    if (match) return { severity, rest: pythonStrip(line.slice(match[0].length)) };
  }
  return null;
}

/** Items of an inline list such as `[- a, - b]`: a lone "none" is zero, anything else at least one. */
function countInlineList(rest: string): number {
  const inner = pythonStrip(rest.replace(/^[[\]]+|[[\]]+$/g, ''));
  if (inner === '' || inner.toLowerCase() === 'none') return 0;
  const items = inner.split(INLINE_ITEM_SEPARATOR).filter((part) => pythonStrip(part) !== '').length;
  return items || 1;
}

/** How many findings of each severity the reviewer's output lists, by its section headers. */
export function classifyReview(text: string): ReviewCounts {
  const counts: ReviewCounts = { critical: 0, major: 0, substantive: 0, cosmetic: 0 };
  let open: Severity | null = null;
  for (const line of (text ?? '').split(LINE_BREAK)) {
    const stripped = pythonStrip(line);
    const header = matchHeader(stripped);
    if (header !== null) {
      open = header.severity;
      const { rest } = header;
      if (ZERO_TOKENS.has(rest.toLowerCase())) open = null;
      else if (BULLET.test(rest) || rest.startsWith('[')) counts[open] += countInlineList(rest);
      else if (rest !== '') counts[open] += 1;
    } else if (open !== null) {
      if (BULLET.test(line)) counts[open] += 1;
      else if (stripped === '') open = null;
    }
  }
  return counts;
}

export function isClean(counts: ReviewCounts): boolean {
  return counts.critical === 0 && counts.major === 0 && counts.substantive === 0;
}

/** The last three earlier records share one non-zero critical+major total: iterating is not helping. */
export function isStuck(history: IterationRecord[]): boolean {
  if (history.length < STUCK_THRESHOLD) return false;
  const totals = history
    .slice(-STUCK_THRESHOLD)
    .map((record) => (record.counts?.critical ?? 0) + (record.counts?.major ?? 0));
  return totals.every((total) => total === totals[0]) && totals[0] > 0;
}

/** Precedence: PASS (clean) > CAP_REACHED (iteration >= 10) > ESCALATE (stuck) > REVISE. */
export function qualityDecision(
  counts: ReviewCounts,
  iteration: number,
  history: IterationRecord[],
): QualityDecision {
  const clean = isClean(counts);
  let action: ReviewAction;
  let stuck = false;
  if (clean) action = 'PASS';
  else {
    stuck = isStuck(history);
    if (iteration >= ITERATION_CAP) action = 'CAP_REACHED';
    else action = stuck ? 'ESCALATE' : 'REVISE';
  }
  return {
    counts,
    is_clean: clean,
    cap_reached: action === 'CAP_REACHED',
    stuck,
    action,
    iteration_record: { iteration, counts, result: action },
  };
}
