import fc from 'fast-check';
import {
  classifyReview,
  qualityDecision,
  QualityDecisionSchema,
  ReviewHistorySchema,
  type ReviewCounts,
} from '../../../../src/domain/fleet/review';

const counts = (critical: number, major: number, substantive: number, cosmetic: number): ReviewCounts => ({
  critical,
  major,
  substantive,
  cosmetic,
});

/** [name, reviewer output, expected counts] — every header and list rule of the flags contract. */
const CLASSIFY_CASES: Array<[string, string, ReviewCounts]> = [
  ['empty output', '', counts(0, 0, 0, 0)],
  ['prose only', 'Looks good to me.\n- not under a header', counts(0, 0, 0, 0)],
  ['bullets under CRITICAL', 'CRITICAL:\n- a\n- b', counts(2, 0, 0, 0)],
  ['star and dot bullets count', 'MAJOR:\n* a\n• b\n- c', counts(0, 3, 0, 0)],
  ['indented bullets count', 'MAJOR:\n    - a\n\t- b', counts(0, 2, 0, 0)],
  ['bullet needs a space after the marker', 'MAJOR:\n-a\n*b\n- c', counts(0, 1, 0, 0)],
  ['numbered items are ignored', 'MAJOR:\n1. a\n2. b', counts(0, 0, 0, 0)],
  ['other lines inside a section are ignored', 'CRITICAL:\n- a\n  continued text\n- b', counts(2, 0, 0, 0)],
  ['blank line closes the section', 'CRITICAL:\n- a\n\n- b', counts(1, 0, 0, 0)],
  ['whitespace-only line closes the section', 'CRITICAL:\n- a\n   \t\n- b', counts(1, 0, 0, 0)],
  ['new header closes the previous section', 'CRITICAL:\n- a\nMAJOR:\n- b\n- c', counts(1, 2, 0, 0)],
  ['WARNING counts as major', 'WARNING:\n- a', counts(0, 1, 0, 0)],
  ['MINOR-substantive', 'MINOR-substantive:\n- a\n- b', counts(0, 0, 2, 0)],
  ['MINOR-cosmetic', 'MINOR-cosmetic:\n- a', counts(0, 0, 0, 1)],
  ['SUGGESTION-substantive counts as substantive', 'SUGGESTION-substantive:\n- a', counts(0, 0, 1, 0)],
  ['SUGGESTION-cosmetic counts as cosmetic', 'SUGGESTION-cosmetic:\n- a', counts(0, 0, 0, 1)],
  ['headers are case-insensitive', 'critical:\n- a\nMinor-Substantive:\n- b', counts(1, 0, 1, 0)],
  ['spaces before the colon are allowed', 'CRITICAL   :\n- a\nMAJOR\t:\n- b', counts(1, 1, 0, 0)],
  ['indented header still matches', '   CRITICAL:\n- a', counts(1, 0, 0, 0)],
  ['header not at line start does not match', 'Findings CRITICAL:\n- a', counts(0, 0, 0, 0)],
  ['bare MINOR is not a header', 'MINOR:\n- a', counts(0, 0, 0, 0)],
  ['markdown heading is not a header', '## CRITICAL:\n- a', counts(0, 0, 0, 0)],
  ['None means zero', 'CRITICAL: None\n- a', counts(0, 0, 0, 0)],
  ['[none] means zero', 'MAJOR: [NONE]\n- a', counts(0, 0, 0, 0)],
  ['[] means zero', 'MAJOR: []', counts(0, 0, 0, 0)],
  ['0 means zero', 'MAJOR: 0', counts(0, 0, 0, 0)],
  ['zero token closes the section for later bullets', 'CRITICAL: none\n- a\nMAJOR:\n- b', counts(0, 1, 0, 0)],
  ['plain text after the colon is one item', 'MAJOR: the cache is never invalidated', counts(0, 1, 0, 0)],
  ['one inline item keeps the section open', 'MAJOR: one thing\n- and another', counts(0, 2, 0, 0)],
  ['inline dash list', 'MAJOR: - a, - b, - c', counts(0, 3, 0, 0)],
  ['inline bracket list with dashes', 'CRITICAL: [- a, - b]', counts(2, 0, 0, 0)],
  ['inline bracket list without dashes is one item', 'CRITICAL: [a, b, c]', counts(1, 0, 0, 0)],
  ['inline list: spaces around the comma still split', 'MAJOR: [- a ,   -   b]', counts(0, 2, 0, 0)],
  ['inline list then bullets', 'MAJOR: [- a, - b]\n- c', counts(0, 3, 0, 0)],
  ['inline [ none ] counts zero but stays open', 'MAJOR: [ none ]\n- a', counts(0, 1, 0, 0)],
  ['inline [ ] counts zero', 'MAJOR: [ ]', counts(0, 0, 0, 0)],
  ['inline star bullet is one item', 'MAJOR: * a, * b', counts(0, 1, 0, 0)],
  ['zero-token match is case-insensitive', 'CRITICAL: NONE\nMAJOR: [None]', counts(0, 0, 0, 0)],
  ['"none yet" is one item', 'MAJOR: none yet', counts(0, 1, 0, 0)],
  ['CRLF line endings', 'CRITICAL:\r\n- a\r\n- b\r\n\r\nMAJOR: x\r\n', counts(2, 1, 0, 0)],
  ['CR line endings', 'CRITICAL:\r- a\r\r- b', counts(1, 0, 0, 0)],
  ['U+2028 separates lines as in Python', 'MAJOR:\u2028- a\u2028- b', counts(0, 2, 0, 0)],
  [
    'a full review',
    [
      'Review of task m1t2',
      '',
      'CRITICAL: None',
      'MAJOR:',
      '- migrations are not reversible',
      '- no test for the error path',
      '',
      'MINOR-substantive: [- naming of FooBar, - missing doc]',
      'MINOR-cosmetic:',
      '* trailing whitespace',
      'SUGGESTION-cosmetic: reorder imports',
      'Overall: revise.',
    ].join('\n'),
    counts(0, 2, 2, 2),
  ],
];

describe('classifyReview', () => {
  it.each(CLASSIFY_CASES)('%s', (_name, text, expected) => {
    expect(classifyReview(text)).toEqual(expected);
  });

  it('never throws and always returns four non-negative integers', () => {
    const line = fc.oneof(
      fc.constantFrom(
        'CRITICAL:',
        'MAJOR: x',
        'WARNING : none',
        '- a',
        '* b',
        '',
        '[- a, - b]',
        'MINOR-cosmetic:',
      ),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), (lines) => {
        const result = classifyReview(lines.join('\n'));
        expect(Object.keys(result)).toEqual(['critical', 'major', 'substantive', 'cosmetic']);
        for (const value of Object.values(result)) expect(Number.isInteger(value) && value >= 0).toBe(true);
      }),
    );
  });
});

const record = (critical: number, major: number, substantive = 0) => ({
  iteration: 1,
  counts: counts(critical, major, substantive, 0),
  result: 'REVISE',
});

/** [name, counts, iteration, history, action, cap_reached, stuck] */
const DECISION_CASES: Array<[string, ReviewCounts, number, unknown[], string, boolean, boolean]> = [
  ['clean passes', counts(0, 0, 0, 0), 1, [], 'PASS', false, false],
  ['cosmetic only is clean', counts(0, 0, 0, 5), 3, [], 'PASS', false, false],
  ['clean passes at the cap', counts(0, 0, 0, 1), 10, [], 'PASS', false, false],
  [
    'clean passes even when history is stuck',
    counts(0, 0, 0, 0),
    4,
    [record(1, 1), record(2, 0), record(0, 2)],
    'PASS',
    false,
    false,
  ],
  ['substantive alone revises', counts(0, 0, 1, 0), 1, [], 'REVISE', false, false],
  ['major revises', counts(0, 1, 0, 0), 2, [record(1, 0)], 'REVISE', false, false],
  ['iteration 9 still revises', counts(1, 0, 0, 0), 9, [], 'REVISE', false, false],
  ['iteration 10 reaches the cap', counts(1, 0, 0, 0), 10, [], 'CAP_REACHED', true, false],
  ['iteration 12 reaches the cap', counts(0, 0, 1, 0), 12, [], 'CAP_REACHED', true, false],
  [
    'cap wins over stuck, stuck still reported',
    counts(1, 0, 0, 0),
    10,
    [record(1, 0), record(0, 1), record(1, 0)],
    'CAP_REACHED',
    true,
    true,
  ],
  [
    'same non-zero total three times escalates',
    counts(2, 0, 0, 0),
    4,
    [record(2, 0), record(1, 1), record(0, 2)],
    'ESCALATE',
    false,
    true,
  ],
  [
    'only the last three records count',
    counts(2, 0, 0, 0),
    5,
    [record(5, 0), record(1, 0), record(1, 0), record(0, 1)],
    'ESCALATE',
    false,
    true,
  ],
  [
    'a changed total is not stuck',
    counts(2, 0, 0, 0),
    4,
    [record(2, 0), record(1, 0), record(1, 0)],
    'REVISE',
    false,
    false,
  ],
  ['two records are not enough', counts(2, 0, 0, 0), 3, [record(1, 0), record(1, 0)], 'REVISE', false, false],
  [
    'zero totals are never stuck',
    counts(0, 0, 1, 0),
    4,
    [record(0, 0, 3), record(0, 0, 2), record(0, 0, 1)],
    'REVISE',
    false,
    false,
  ],
  [
    'the current review is not part of the stuck test',
    counts(3, 0, 0, 0),
    4,
    [record(1, 0), record(2, 0), record(3, 0)],
    'REVISE',
    false,
    false,
  ],
  ['records without counts count as zero', counts(1, 0, 0, 0), 4, [{}, {}, {}], 'REVISE', false, false],
  [
    'missing keys in counts count as zero',
    counts(1, 0, 0, 0),
    4,
    [{ counts: { major: 1 } }, { counts: { critical: 1 } }, { counts: { major: 1, extra: 9 } }],
    'ESCALATE',
    false,
    true,
  ],
];

describe('qualityDecision', () => {
  it.each(DECISION_CASES)('%s', (_name, reviewCounts, iteration, history, action, capReached, stuck) => {
    const decision = qualityDecision(reviewCounts, iteration, ReviewHistorySchema.parse(history));
    expect(decision).toEqual({
      counts: reviewCounts,
      is_clean: action === 'PASS',
      cap_reached: capReached,
      stuck,
      action,
      iteration_record: { iteration, counts: reviewCounts, result: action },
    });
    expect(Object.keys(decision)).toEqual([
      'counts',
      'is_clean',
      'cap_reached',
      'stuck',
      'action',
      'iteration_record',
    ]);
    expect(QualityDecisionSchema.safeParse(decision).success).toBe(true);
  });
});

describe('ReviewHistorySchema', () => {
  it('accepts earlier iteration records, keeping extra fields', () => {
    const parsed = ReviewHistorySchema.parse([
      { iteration: 1, counts: counts(1, 0, 0, 0), result: 'REVISE', note: 'x' },
    ]);
    expect(parsed[0]).toMatchObject({ note: 'x' });
  });

  it.each([
    ['not an array', { iteration: 1 }],
    ['an entry that is not an object', [1]],
    ['a count that is not a number', [{ counts: { critical: 'two' } }]],
    ['a negative count', [{ counts: { major: -1 } }]],
  ])('rejects %s', (_name, value) => {
    expect(ReviewHistorySchema.safeParse(value).success).toBe(false);
  });
});
