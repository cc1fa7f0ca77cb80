import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flagsCommand } from '../../../src/client/commands/flags';
import { loadSageConfigDefaults } from '../../../src/client/sage-config';
import { parseConfigDefaults, parseFlags, toContractJson } from '../../../src/domain/request/flags';
import { FLAG_CASES, type FlagCase } from '../../fixtures/flag-cases';

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function run(argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await flagsCommand(argv, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out, err };
}

let dir: string;
const configPaths = new Map<FlagCase, string>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'saga-flags-cli-'));
  FLAG_CASES.forEach((testCase, i) => {
    if (testCase.config === undefined) return;
    const path = join(dir, `config-${i}.yaml`);
    writeFileSync(path, testCase.config, 'utf8');
    configPaths.set(testCase, path);
  });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI must print exactly what the module computes, and the table's expectation. */
async function expectAgreement(testCase: FlagCase, argv: string[]): Promise<void> {
  const result = await run(argv);
  const moduleResult = parseFlags(testCase.args, parseConfigDefaults(testCase.config ?? null));
  expect(result.out).toEqual([toContractJson(moduleResult)]);
  expect(JSON.parse(result.out[0])).toEqual(testCase.expected);
  expect(result.code).toBe(testCase.expected.error === null ? 0 : 1);
  expect(result.err).toEqual([]);
}

const isCliWord = (word: string) => word === '--config-path' || word.startsWith('--config-path=');

describe('saga flags parse agrees with the module on the whole table', () => {
  const cases = FLAG_CASES.map((c) => [c.name, c] as const);

  it.each(cases)('one argument after a -- separator: %s', async (_name, testCase) => {
    const path = configPaths.get(testCase);
    await expectAgreement(testCase, [
      'parse',
      '--',
      testCase.args,
      ...(path ? [`--config-path=${path}`] : []),
    ]);
  });

  it.each(cases.filter(([, c]) => !['--', '-h', '--help'].includes(c.args) && !isCliWord(c.args)))(
    'one argument, no separator: %s',
    async (_name, testCase) => {
      const path = configPaths.get(testCase);
      await expectAgreement(testCase, ['parse', testCase.args, ...(path ? ['--config-path', path] : [])]);
    },
  );

  it.each(
    cases.filter(([, c]) => {
      const words = c.args.split(' ');
      return (
        words[0] !== '--' &&
        !words.some(isCliWord) &&
        !(words.length === 1 && ['-h', '--help'].includes(words[0]))
      );
    }),
  )('several words, config path first: %s', async (_name, testCase) => {
    const path = configPaths.get(testCase);
    await expectAgreement(testCase, [
      'parse',
      ...(path ? ['--config-path', path] : []),
      ...testCase.args.split(' '),
    ]);
  });
});

describe('saga flags parse: arguments and config files', () => {
  const autonomousOn = { autonomous: true, autonomous_source: 'config' };

  it('takes --config-path between payload words', async () => {
    const path = join(dir, 'between.yaml');
    writeFileSync(path, 'autonomous: true\r\n');
    const result = await run(['parse', '--subagents', '--config-path', path, 'Ship', 'it']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out[0])).toMatchObject({ ...autonomousOn, subagents: true, goal: 'Ship it' });
  });

  it('honours the separator after --config-path', async () => {
    const path = join(dir, 'sep.yaml');
    writeFileSync(path, 'autonomous: true\n');
    const result = await run(['parse', '--config-path', path, '--', '--quality-locked Go']);
    expect(JSON.parse(result.out[0])).toMatchObject({ ...autonomousOn, quality_locked: true, goal: 'Go' });
  });

  it('treats a trailing --config-path without a value as payload', async () => {
    const result = await run(['parse', '--autonomous', '--config-path']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out[0]).error).toMatch(/^Unknown flag '--config-path'\./);
  });

  it('parses an empty payload as an empty goal', async () => {
    const result = await run(['parse']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out[0])).toMatchObject({ goal: '', error: null, quality_locked: false });
  });

  it.each([
    ['a missing file', () => join(dir, 'nope.yaml')],
    ['a directory', () => dir],
    ['an empty path', () => ''],
    [
      'invalid UTF-8',
      () => {
        const path = join(dir, 'latin1.yaml');
        writeFileSync(
          path,
          Buffer.concat([Buffer.from('autonomous: true\n# caf'), Buffer.from([0xe9, 0x0a])]),
        );
        return path;
      },
    ],
  ])('means no defaults for %s, never a crash', async (_name, makePath) => {
    const path = makePath();
    expect(loadSageConfigDefaults(path)).toEqual({});
    const result = await run(['parse', `--config-path=${path}`, 'Go']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out[0])).toMatchObject({
      autonomous: false,
      autonomous_source: null,
      goal: 'Go',
    });
  });

  const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  (runningAsRoot ? it.skip : it)('means no defaults for an unreadable file', () => {
    const path = join(dir, 'locked.yaml');
    writeFileSync(path, 'autonomous: true\n');
    chmodSync(path, 0o000);
    expect(loadSageConfigDefaults(path)).toEqual({});
  });

  it('reads a file exactly as the pure reader reads its text', () => {
    const text = 'quality_locked: true\r\nautonomous: True\rsubagents: true\nparallel: true # x\n';
    const path = join(dir, 'mixed.yaml');
    writeFileSync(path, text);
    expect(loadSageConfigDefaults(path)).toEqual(parseConfigDefaults(text));
    expect(loadSageConfigDefaults(path)).toEqual({ quality_locked: true, subagents: true });
    expect(loadSageConfigDefaults(undefined)).toEqual({});
  });

  it('prints usage for parse --help', async () => {
    const result = await run(['parse', '--help']);
    expect(result.code).toBe(0);
    expect(result.out.join('\n')).toContain('saga flags parse ARGUMENTS [--config-path PATH]');
  });
});

describe('saga flags classify / check', () => {
  const review = 'CRITICAL:\n- a\n- b\n\nMAJOR: none\nMINOR-cosmetic: [- x, - y]';

  it('classify prints the counts', async () => {
    const result = await run(['classify', '--review-output', review]);
    expect(result).toEqual({
      code: 0,
      out: ['{"counts": {"critical": 2, "major": 0, "substantive": 0, "cosmetic": 2}}'],
      err: [],
    });
  });

  it('classify accepts --review-output=TEXT and values starting with a dash', async () => {
    expect((await run(['classify', '--review-output=MAJOR: x'])).out).toEqual([
      '{"counts": {"critical": 0, "major": 1, "substantive": 0, "cosmetic": 0}}',
    ]);
    expect((await run(['classify', '--review-output', '- just a bullet'])).code).toBe(0);
  });

  it('check prints the decision with its iteration record', async () => {
    const history = JSON.stringify(
      [1, 2, 3].map((i) => ({ iteration: i, counts: { critical: 2, major: 0 } })),
    );
    const result = await run([
      'check',
      '--review-output',
      review,
      '--iteration',
      '4',
      '--history-json',
      history,
    ]);
    expect(result.code).toBe(0);
    expect(result.out).toEqual([
      '{"counts": {"critical": 2, "major": 0, "substantive": 0, "cosmetic": 2}, "is_clean": false, ' +
        '"cap_reached": false, "stuck": true, "action": "ESCALATE", "iteration_record": {"iteration": 4, ' +
        '"counts": {"critical": 2, "major": 0, "substantive": 0, "cosmetic": 2}, "result": "ESCALATE"}}',
    ]);
  });

  it('check defaults the history to empty and passes a clean review', async () => {
    const result = await run(['check', '--iteration=10', '--review-output=MINOR-cosmetic: x']);
    expect(JSON.parse(result.out[0])).toMatchObject({ action: 'PASS', is_clean: true, cap_reached: false });
  });

  it('check reports the cap', async () => {
    const result = await run(['check', '--review-output', 'MAJOR: x', '--iteration', '10']);
    expect(JSON.parse(result.out[0])).toMatchObject({ action: 'CAP_REACHED', cap_reached: true });
  });

  it.each([
    ['not JSON', '[{', /^Invalid --history-json: /],
    ['not an array', '{"iteration": 1}', /^Invalid --history-json: history must be a JSON array$/],
    ['a bad count', '[{"counts": {"major": "x"}}]', /^Invalid --history-json: history\[0\]\.counts\.major: /],
  ])('check rejects history that is %s', async (_name, history, message) => {
    const result = await run([
      'check',
      '--review-output',
      'MAJOR: x',
      '--iteration',
      '2',
      '--history-json',
      history,
    ]);
    expect(result.code).toBe(1);
    expect(result.out).toHaveLength(1);
    expect(JSON.parse(result.out[0]).error).toMatch(message);
  });

  it.each(['abc', '0', '-1', '2.5', '', '1e3'])('check rejects iteration %p', async (iteration) => {
    const result = await run(['check', '--review-output', 'MAJOR: x', '--iteration', iteration]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.out[0]).error).toBe(
      `Invalid --iteration: expected a whole number of 1 or more (got '${iteration}').`,
    );
  });
});

describe('saga flags usage errors', () => {
  it.each([
    ['no subcommand', [], /Missing subcommand/],
    ['an unknown subcommand', ['frobnicate'], /Unknown subcommand 'frobnicate'/],
    ['classify without --review-output', ['classify'], /Missing required option --review-output\./],
    [
      'an option without its value',
      ['classify', '--review-output'],
      /Option --review-output needs a value\./,
    ],
    ['an unknown option', ['classify', '--review-output', 'x', '--verbose'], /Unknown argument '--verbose'/],
    ['check without --iteration', ['check', '--review-output', 'x'], /Missing required option --iteration\./],
    ['a stray positional', ['check', 'x'], /Unknown argument 'x' for 'saga flags check'/],
  ])('exit 1 with a clear message for %s', async (_name, argv, message) => {
    const result = await run(argv as string[]);
    expect(result.code).toBe(1);
    expect(result.out).toEqual([]);
    expect(result.err[0]).toMatch(message);
    expect(result.err.join('\n')).toContain('Usage:');
  });

  it('prints usage for --help', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.out[0]).toContain('saga flags check --review-output TEXT --iteration N');
  });
});
