/**
 * Which tasks a failed milestone validation points at: files named in the output or the command that a
 * task owns or changed, a check a task declared as its own, and every task only when nothing points.
 */
import {
  describeBlame,
  namedPathsIn,
  ownsPath,
  tasksToRedelegate,
  type SuspectTask,
} from '../../../../src/domain/fleet/milestone-failure';

const task = (ref: string, owns: string[], extra: Partial<SuspectTask> = {}): SuspectTask => ({
  ref,
  owns,
  checks: [],
  changedFiles: [],
  ...extra,
});
const theme = task('2.3', ['src/theme.ts', 'test/theme.test.ts'], { checks: ['npm run test:theme'] });
const menu = task('2.4', ['src/menu/**'], { checks: ['npm run test:menu'] });
const refs = (failures: Parameters<typeof tasksToRedelegate>[0], tasks = [theme, menu]) =>
  tasksToRedelegate(failures, tasks).tasks.map((t) => t.ref);

describe('namedPathsIn', () => {
  test('finds relative and absolute paths, without line numbers or ./', () => {
    const output = [
      'FAIL ./test/theme.test.ts',
      '  at Object.<anonymous> (/tmp/saga-x-integration/src/theme.ts:12:5)',
      'Error: cannot read config.json',
    ].join('\n');
    expect(namedPathsIn(output)).toEqual([
      'test/theme.test.ts',
      '/tmp/saga-x-integration/src/theme.ts',
      'config.json',
    ]);
  });

  test('skips passing lines, versions and task numbers', () => {
    const output =
      'PASS test/menu.test.ts\nok 1 - test/menu.test.js\nnode v20.1.0, task 1.2, 3.5s\nnot ok 2 - src/a.js';
    expect(namedPathsIn(output)).toEqual(['src/a.js']);
  });

  test('is capped', () => {
    const output = Array.from({ length: 20 }, (_, i) => `src/f${i}.js`).join('\n');
    expect(namedPathsIn(output, 5)).toHaveLength(5);
  });
});

describe('ownsPath', () => {
  test.each([
    ['src/theme.ts', 'src/theme.ts', true],
    ['src/theme.ts', 'src/theme.tsx', false],
    ['src/menu/', 'src/menu/a.ts', true],
    ['src/menu', 'src/menuitem.ts', false],
    ['src/menu/**', 'src/menu/deep/a.ts', true],
    ['src/**/*.css', 'src/a/b/c.css', true],
    ['src/**/*.css', 'src/c.css', true],
    ['src/*.ts', 'src/a/b.ts', false],
    ['src/*.{ts,js}', 'src/a.js', true],
    ['src/*.{ts,js}', 'src/a.css', false],
    ['./lib/x.js', 'lib/x.js', true],
    ['.', 'anything/at/all.js', true],
  ])('%s covers %s: %s', (pattern, file, expected) => {
    expect(ownsPath(pattern, file)).toBe(expected);
  });
});

describe('tasksToRedelegate', () => {
  test('a file named in the output picks the task that owns it', () => {
    const blame = tasksToRedelegate(
      [{ check: 'npm test', output: 'FAIL test/theme.test.ts\n  expected dark, got light' }],
      [theme, menu],
    );
    expect(blame).toEqual({
      rules: ['named-in-output'],
      tasks: [{ ref: '2.3', reasons: ["owns test/theme.test.ts, named in the output of 'npm test'"] }],
    });
    expect(describeBlame(blame)).toBe("2.3 (owns test/theme.test.ts, named in the output of 'npm test')");
  });

  test('absolute paths of the integration worktree count, and globs cover them', () => {
    const output =
      'TypeError: x is undefined\n    at render (/tmp/wt/saga-a-integration/src/menu/render.ts:3:9)';
    expect(refs([{ check: 'npm test', output }])).toEqual(['2.4']);
  });

  test('paths the activity found in the whole output count like the tail', () => {
    expect(refs([{ check: 'npm test', output: '1 failing', namedPaths: ['src/theme.ts'] }])).toEqual(['2.3']);
  });

  test('files a task changed outside its owns count too', () => {
    const shared = task('2.5', ['src/other.ts'], { changedFiles: ['src/other.ts', 'src/shared.ts'] });
    const blame = tasksToRedelegate(
      [{ check: 'npm test', output: 'src/shared.ts(4,1): error TS2304' }],
      [theme, shared],
    );
    expect(blame.tasks).toEqual([
      { ref: '2.5', reasons: ["changed src/shared.ts, named in the output of 'npm test'"] },
    ]);
  });

  test('several tasks named in one output are all picked', () => {
    const output = 'FAIL test/theme.test.ts\nFAIL src/menu/menu.test.ts';
    expect(refs([{ check: 'npm test', output }])).toEqual(['2.3', '2.4']);
  });

  test('files named in the command count when the output names none', () => {
    const blame = tasksToRedelegate([{ check: 'grep -q dark src/theme.ts', output: '' }], [theme, menu]);
    expect(blame.rules).toEqual(['named-in-command']);
    expect(blame.tasks).toEqual([
      { ref: '2.3', reasons: ["owns src/theme.ts, named in the command 'grep -q dark src/theme.ts'"] },
    ]);
  });

  test('the output wins over the command', () => {
    const check = "node -e \"for (const f of ['src/theme.ts', 'src/menu/a.ts']) require('./' + f)\"";
    expect(refs([{ check, output: 'Error: src/menu/a.ts is broken' }])).toEqual(['2.4']);
  });

  test('a failing check a task declared as its own picks that task', () => {
    const blame = tasksToRedelegate([{ check: 'npm  run test:menu', output: '1 failing' }], [theme, menu]);
    expect(blame).toEqual({
      rules: ['own-check'],
      tasks: [{ ref: '2.4', reasons: ["declared 'npm  run test:menu' as its own check"] }],
    });
  });

  test('each failing check points on its own; the union is re-delegated', () => {
    const blame = tasksToRedelegate(
      [
        { check: 'npm run test:menu', output: 'boom' },
        { check: 'npm run lint', output: 'test/theme.test.ts: 1 problem' },
      ],
      [theme, menu],
    );
    expect(blame.rules).toEqual(['own-check', 'named-in-output']);
    expect(blame.tasks.map((t) => t.ref)).toEqual(['2.3', '2.4']);
  });

  test('a task named by two checks gets both reasons', () => {
    const blame = tasksToRedelegate(
      [
        { check: 'npm test', output: 'FAIL test/theme.test.ts' },
        { check: 'npm run test:theme', output: 'boom' },
      ],
      [theme, menu],
    );
    expect(blame.tasks).toEqual([
      {
        ref: '2.3',
        reasons: [
          "owns test/theme.test.ts, named in the output of 'npm test'",
          "declared 'npm run test:theme' as its own check",
        ],
      },
    ]);
  });

  test('nothing points anywhere: every task, and the log says so', () => {
    const blame = tasksToRedelegate(
      [{ check: 'npm test', output: 'Error: connect ECONNREFUSED 127.0.0.1:5432' }],
      [theme, menu],
    );
    expect(blame.rules).toEqual(['every-task']);
    expect(blame.tasks.map((t) => t.ref)).toEqual(['2.3', '2.4']);
    expect(describeBlame(blame)).toBe(
      "every task (2.3, 2.4): nothing in the failure names one task's files or checks",
    );
  });

  test('files nobody owns or changed do not point anywhere', () => {
    expect(
      refs([{ check: 'npm test', output: 'Cannot find module node_modules/left-pad/index.js' }]),
    ).toEqual(['2.3', '2.4']);
  });

  test('no failing checks (nothing to go on) means every task', () => {
    expect(refs([])).toEqual(['2.3', '2.4']);
  });
});
