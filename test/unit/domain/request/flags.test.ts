import fc from 'fast-check';
import {
  FLAG_VOCABULARY,
  parseConfigDefaults,
  parseFlags,
  toContractJson,
} from '../../../../src/domain/request/flags';
import { FlagsResultSchema, type FlagsResult } from '../../../../src/domain/contract/flags-result';
import {
  announceModes,
  resolveExecutionMode,
  resolveParallel,
  resolveParallelRequiringSubagents,
} from '../../../../src/domain/request/mode-resolution';
import { CONTRACT_KEYS, FLAG_CASES } from '../../../fixtures/flag-cases';

describe('parseFlags: the contract table', () => {
  it('covers at least 150 cases with unique names', () => {
    expect(FLAG_CASES.length).toBeGreaterThanOrEqual(150);
    expect(new Set(FLAG_CASES.map((c) => c.name)).size).toBe(FLAG_CASES.length);
  });

  it.each(FLAG_CASES.map((c) => [c.name, c] as const))('%s', (_name, testCase) => {
    const result = parseFlags(testCase.args, parseConfigDefaults(testCase.config ?? null));
    expect(result).toEqual(testCase.expected);
    expect(Object.keys(result)).toEqual(CONTRACT_KEYS);
  });
});

describe('parseConfigDefaults', () => {
  it('reads nothing from null or empty text', () => {
    expect(parseConfigDefaults(null)).toEqual({});
    expect(parseConfigDefaults('')).toEqual({});
  });

  it('returns exactly the keys whose line is `<key>: true`', () => {
    const text = 'quality_locked: true\r\nautonomous: yes\rsubagents: true\nparallel:true\n';
    expect(parseConfigDefaults(text)).toEqual({ quality_locked: true, subagents: true });
  });

  it('honours a key anywhere in a longer YAML file', () => {
    const text = 'project: demo\nchecks:\n  - npm test\nautonomous: true\n# end\n';
    expect(parseConfigDefaults(text)).toEqual({ autonomous: true });
  });
});

describe('resolveExecutionMode', () => {
  it('is inline and quiet when subagents were not requested', () => {
    for (const subagentDispatch of [true, false]) {
      expect(resolveExecutionMode(false, { subagentDispatch })).toEqual({
        mode: 'inline',
        degraded: false,
        manifestValue: 'inline',
        announcement: null,
      });
    }
  });

  it('grants subagents when the profile can dispatch', () => {
    expect(resolveExecutionMode(true, { subagentDispatch: true })).toEqual({
      mode: 'subagents',
      degraded: false,
      manifestValue: 'subagents',
      announcement: null,
    });
  });

  it('refuses loudly when the profile cannot dispatch', () => {
    const result = resolveExecutionMode(true, { subagentDispatch: false, profileName: 'plain-cli' });
    expect(result.mode).toBe('inline');
    expect(result.degraded).toBe(true);
    expect(result.manifestValue).toBe('inline (subagents-unavailable)');
    expect(result.announcement).toContain("the agent profile 'plain-cli' sets subagent_dispatch: false");
    expect(result.announcement).toContain('per-task review is NOT independent');
    expect(result.announcement).toContain('decisions.md');
  });
});

describe('resolveParallel', () => {
  const flags = (args: string): FlagsResult => parseFlags(args, {});

  it('is sequential and quiet when parallel is off', () => {
    expect(resolveParallel(flags('Go'))).toEqual({
      lanes: 1,
      degraded: false,
      manifestValue: 'sequential',
      announcement: null,
    });
  });

  it('runs the requested lanes, whatever the execution mode', () => {
    expect(resolveParallel(flags('--parallel Go'))).toEqual({
      lanes: 2,
      degraded: false,
      manifestValue: 'parallel (2 lanes)',
      announcement: null,
    });
    expect(resolveParallel(flags('--parallel=17 Go')).manifestValue).toBe('parallel (4 lanes)');
    expect(resolveParallel(flags('--parallel=1 Go')).manifestValue).toBe('parallel (1 lane)');
  });

  it('under the earlier rule (kept for replay), degrades loudly to sequential without subagents', () => {
    const result = resolveParallelRequiringSubagents(flags('--parallel=3 Go'), 'inline');
    expect(result.lanes).toBe(1);
    expect(result.degraded).toBe(true);
    expect(result.manifestValue).toBe('sequential (parallel-requires-subagents)');
    expect(result.announcement).toContain('--parallel requires subagent execution');
    expect(resolveParallelRequiringSubagents(flags('--parallel=3 Go'), 'subagents').lanes).toBe(3);
  });
});

describe('announceModes', () => {
  it('renders the announcement of both modes', () => {
    const parsed = parseFlags('--autonomous --quality-locked Ship dark mode for the dashboard', {});
    expect(announceModes(parsed)).toBe(
      'Sage → build workflow.\nModes: --quality-locked, --autonomous\nGoal: Ship dark mode for the dashboard',
    );
  });

  it('omits the Modes line when no mode is on', () => {
    expect(announceModes(parseFlags('--no-autonomous Go', {}))).toBe('Sage → build workflow.\nGoal: Go');
  });

  it('lists config-sourced modes, lanes and the clamp note', () => {
    const parsed = parseFlags('--parallel=9 --subagents Go', { quality_locked: true });
    expect(announceModes(parsed, { product: 'Saga', workflow: 'architect' })).toBe(
      'Saga → architect workflow.\nModes: --quality-locked, --subagents, --parallel=4\n' +
        'Note: --parallel=9 exceeds the hard cap; clamped to 4.\nGoal: Go',
    );
  });

  it('surfaces an error verbatim', () => {
    expect(announceModes(parseFlags('--foo', {}))).toMatch(/^Sage: Unknown flag '--foo'\. Supported flags: /);
  });
});

describe('toContractJson', () => {
  it('prints the contract like the reference tool, one line, contract order', () => {
    expect(toContractJson(parseFlags('--quality-locked Ship dark mode', {}))).toBe(
      '{"quality_locked": true, "autonomous": false, "subagents": false, "parallel": false, ' +
        '"goal": "Ship dark mode", "error": null, "quality_locked_source": "flag", "autonomous_source": null, ' +
        '"subagents_source": null, "parallel_source": null, "parallel_lanes": 0, "parallel_note": null}',
    );
  });

  it('escapes everything outside printable ASCII', () => {
    expect(toContractJson({ s: 'é🌙"\\\n\t\u0001\u007f' })).toBe(
      '{"s": "\\u00e9\\ud83c\\udf19\\"\\\\\\n\\t\\u0001\\u007f"}',
    );
    expect(toContractJson([1, true, null, { a: [] }])).toBe('[1, true, null, {"a": []}]');
  });

  it('round-trips through JSON.parse', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(JSON.parse(toContractJson({ s }))).toEqual({ s });
      }),
    );
  });
});

describe('parseFlags: properties', () => {
  const flagWords = [
    ...FLAG_VOCABULARY.keys.flatMap((k) => [`--${k.replace(/_/g, '-')}`, `--no-${k.replace(/_/g, '-')}`]),
    '--parallel=3',
    '--parallel=9',
    '--parallel=0',
    '--foo',
    '--',
    'Ship',
    'it',
  ];
  const argumentsText = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.array(fc.oneof(fc.constantFrom(...flagWords), fc.string()), { maxLength: 8 }).map((w) => w.join(' ')),
  );
  const defaults = fc.record(
    {
      quality_locked: fc.boolean(),
      autonomous: fc.boolean(),
      subagents: fc.boolean(),
      parallel: fc.boolean(),
    },
    { requiredKeys: [] },
  );

  it('never throws, is deterministic and always yields the twelve keys in order', () => {
    fc.assert(
      fc.property(argumentsText, defaults, (text, config) => {
        const first = parseFlags(text, config);
        expect(toContractJson(parseFlags(text, config))).toBe(toContractJson(first));
        expect(Object.keys(first)).toEqual(CONTRACT_KEYS);
        expect(FlagsResultSchema.safeParse(first).success).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('on an error has every mode off, empty goal, 0 lanes and no note', () => {
    fc.assert(
      fc.property(argumentsText, defaults, (text, config) => {
        const result = parseFlags(text, config);
        if (result.error === null) return;
        expect(result).toEqual({
          ...Object.fromEntries(
            CONTRACT_KEYS.map((k) => [k, k.endsWith('_lanes') ? 0 : k === 'goal' ? '' : null]),
          ),
          quality_locked: false,
          autonomous: false,
          subagents: false,
          parallel: false,
          error: result.error,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a goal that does not start with "--" verbatim after the flags', () => {
    const goal = fc
      .string({ minLength: 1 })
      .map((s) => s.trim())
      .filter((s) => s.length > 0 && !s.startsWith('--') && s === s.replace(/^\s+|\s+$/g, ''));
    fc.assert(
      fc.property(goal, (g) => {
        expect(parseFlags(`--autonomous  ${g}`, {}).goal).toBe(g);
        expect(parseFlags(g, {}).goal).toBe(g);
      }),
    );
  });

  it('parallel_lanes is 0 exactly when parallel is off', () => {
    fc.assert(
      fc.property(argumentsText, defaults, (text, config) => {
        const result = parseFlags(text, config);
        expect(result.parallel_lanes === 0).toBe(!result.parallel);
      }),
    );
  });

  it('config reading never throws and only reports true keys', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const defaultsRead = parseConfigDefaults(text);
        for (const [key, value] of Object.entries(defaultsRead)) {
          expect(FLAG_VOCABULARY.keys).toContain(key);
          expect(value).toBe(true);
        }
      }),
    );
  });
});
