import fc from 'fast-check';
import {
  criticalPathLength,
  idealMakespan,
  lowerBoundMakespan,
  mergeOrder,
  milestoneOrder,
  ownsOverlap,
  readyTasks,
  type SchedTask,
} from '../../../../src/domain/fleet/schedule';

const task = (ref: string, over: Partial<SchedTask> = {}): SchedTask => ({
  ref,
  milestone: Number(ref.split('.')[0]),
  dependsOn: [],
  owns: [],
  status: 'pending',
  ...over,
});

describe('ownsOverlap', () => {
  test.each([
    [['src/a.js'], ['src/a.js'], true],
    [['src/'], ['src/a.js'], true],
    [['src'], ['src/a.js'], true],
    [['src/a.js'], ['src'], true],
    [['./src/a.js'], ['src/a.js'], true],
    [['src//lib/'], ['src/lib/x.ts'], true],
    [['src/a'], ['src/ab.js'], false],
    [['src/a.js'], ['src/b.js'], false],
    [['test/'], ['src/a.js'], false],
    [['.'], ['anything/at/all'], true],
    [['src/*.js'], ['src/deep/x.ts'], true],
    [['docs/x.md', 'src/a.js'], ['lib', 'src/a.js/'], true],
    [[], ['src'], false],
  ])('%j vs %j -> %s', (a, b, expected) => {
    expect(ownsOverlap(a, b)).toBe(expected);
    expect(ownsOverlap(b, a)).toBe(expected);
  });
});

describe('readyTasks', () => {
  test('starts independent pending tasks in plan order, up to the free lanes', () => {
    const tasks = [task('2.1'), task('1.10'), task('1.2'), task('1.1', { status: 'running' })];
    expect(readyTasks(tasks, 3)).toEqual(['1.2', '1.10']);
    expect(readyTasks(tasks, 1)).toEqual([]);
  });

  test('waits for dependencies to be done or skipped; a blocked dependency keeps the dependent waiting', () => {
    const tasks = [
      task('1.1', { status: 'done' }),
      task('1.2', { status: 'skipped' }),
      task('1.3', { status: 'blocked' }),
      task('1.4', { status: 'running' }),
      task('2.1', { dependsOn: ['1.1', '1.2'] }),
      task('2.2', { dependsOn: ['1.3'] }),
      task('2.3', { dependsOn: ['1.4'] }),
    ];
    expect(readyTasks(tasks, 4)).toEqual(['2.1']);
  });

  test('skips tasks whose owns overlap a running task or a task picked in the same call', () => {
    const tasks = [
      task('1.1', { status: 'running', owns: ['src/'] }),
      task('1.2', { owns: ['./src/a.js'] }),
      task('1.3', { owns: ['test/a.test.js'] }),
      task('1.4', { owns: ['test'] }),
      task('1.5', { owns: ['docs/README.md'] }),
    ];
    expect(readyTasks(tasks, 4)).toEqual(['1.3', '1.5']);
  });

  test('rejects bad input with a clear error', () => {
    expect(() => readyTasks([task('1.1')], 0)).toThrow(/lane count 0/);
    expect(() => readyTasks([task('1.1', { dependsOn: ['9.9'] })], 2)).toThrow(
      /1\.1 depends on unknown task '9\.9'/,
    );
    expect(() => readyTasks([task('1.1'), task('1.1')], 2)).toThrow(/1\.1 appears twice/);
    expect(() => readyTasks([task('one')], 2)).toThrow(/Invalid task ref 'one'/);
    expect(() => readyTasks([task('1.1', { milestone: 2 })], 2)).toThrow(/says milestone 2/);
  });
});

describe('milestoneOrder', () => {
  test('dependencies first, lowest id among equals', () => {
    expect(
      milestoneOrder([
        { id: 3, dependsOn: [] },
        { id: 1, dependsOn: [4] },
        { id: 2, dependsOn: [] },
        { id: 4, dependsOn: [3] },
      ]),
    ).toEqual([2, 3, 4, 1]);
  });

  test('names cycles and unknown milestones', () => {
    expect(() =>
      milestoneOrder([
        { id: 1, dependsOn: [2] },
        { id: 2, dependsOn: [1] },
        { id: 3, dependsOn: [] },
      ]),
    ).toThrow('Dependency cycle among milestone 1, milestone 2.');
    expect(() => milestoneOrder([{ id: 1, dependsOn: [7] }])).toThrow(/depends on unknown milestone 7/);
  });
});

describe('mergeOrder', () => {
  test('dependencies first, lowest task number among equals, other milestones ignored', () => {
    expect(
      mergeOrder([
        { ref: '2.3', dependsOn: [] },
        { ref: '2.1', dependsOn: ['2.10', '1.4'] },
        { ref: '2.10', dependsOn: [] },
        { ref: '2.2', dependsOn: [] },
      ]),
    ).toEqual(['2.2', '2.3', '2.10', '2.1']);
  });

  test('rejects cycles and mixed milestones', () => {
    expect(() =>
      mergeOrder([
        { ref: '1.1', dependsOn: ['1.2'] },
        { ref: '1.2', dependsOn: ['1.1'] },
      ]),
    ).toThrow(/cycle among task 1\.1, task 1\.2/);
    expect(() => mergeOrder([task('1.1'), task('2.1')])).toThrow(/one milestone/);
  });
});

describe('makespan figures', () => {
  // 1.1(4) -> 1.3(1); 1.2(2); 1.4(3) -> 1.5(2)
  const durations = { '1.1': 4, '1.2': 2, '1.3': 1, '1.4': 3, '1.5': 2 };
  const deps = { '1.3': ['1.1'], '1.5': ['1.4'] };

  test('critical path and lower bound', () => {
    expect(criticalPathLength(durations, deps)).toBe(5);
    expect(lowerBoundMakespan(durations, deps, 2)).toBe(6);
    expect(lowerBoundMakespan(durations, deps, 5)).toBe(5);
  });

  test('greedy list schedule in plan order', () => {
    // lanes 2: t0 1.1,1.2; t2 1.4; t4 1.3; t5 1.5 (1.4 ends) ; 1.3 ends 5, 1.5 ends 7
    expect(idealMakespan(durations, deps, 2)).toBe(7);
    expect(idealMakespan(durations, deps, 1)).toBe(12);
    expect(idealMakespan(durations, deps, 4)).toBe(5);
    expect(idealMakespan({}, {}, 2)).toBe(0);
  });

  test('rejects cycles, unknown refs and bad durations', () => {
    expect(() => idealMakespan({ '1.1': 1, '1.2': 1 }, { '1.1': ['1.2'], '1.2': ['1.1'] }, 2)).toThrow(
      /cycle/,
    );
    expect(() => criticalPathLength({ '1.1': 1 }, { '1.1': ['1.9'] })).toThrow(/unknown task '1\.9'/);
    expect(() => idealMakespan({ '1.1': -1 }, {}, 2)).toThrow(/Duration of task 1\.1/);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: simulate whole runs with random plans, lane counts and completion orders.

const OWNED_PATHS = [
  'src',
  'src/a.js',
  './src/b.js',
  'src/ab.js',
  'test/',
  'test/a.test.js',
  'docs/x.md',
  'lib/',
];

/** Random acyclic plans: each task may depend only on tasks earlier in plan order. */
const planArb = fc
  .array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 })
  .chain((perMilestone) => {
    const refs = perMilestone.flatMap((count, m) =>
      Array.from({ length: count }, (_, t) => `${m + 1}.${t + 1}`),
    );
    return fc.tuple(
      ...refs.map((ref, i) =>
        fc
          .record({
            dependsOn: fc.subarray(refs.slice(0, i), { maxLength: Math.min(3, i) }),
            owns: fc.subarray(OWNED_PATHS, { maxLength: 2 }),
            duration: fc.integer({ min: 0, max: 5 }),
          })
          .map(({ dependsOn, owns, duration }) => ({ ...task(ref, { dependsOn, owns }), duration })),
      ),
    );
  });

type Outcome = 'done' | 'blocked';

/** Runs the scheduler to quiescence, checking every invariant after each start; returns the final tasks. */
function simulate(plan: SchedTask[], lanes: number, picks: number[], outcomes: Outcome[]): SchedTask[] {
  const tasks = plan.map((t) => ({ ...t }));
  const byRef = new Map(tasks.map((t) => [t.ref, t]));
  for (let step = 0; step < tasks.length * 2 + 2; step++) {
    for (const ref of readyTasks(tasks, lanes)) {
      const started = byRef.get(ref)!;
      expect(started.status).toBe('pending');
      for (const dep of started.dependsOn) expect(['done', 'skipped']).toContain(byRef.get(dep)!.status);
      started.status = 'running';
    }
    const running = tasks.filter((t) => t.status === 'running');
    expect(running.length).toBeLessThanOrEqual(lanes);
    running.forEach((a, i) =>
      running.slice(i + 1).forEach((b) => expect(ownsOverlap(a.owns, b.owns)).toBe(false)),
    );
    if (running.length === 0) return tasks;
    const finishing = running[picks[step % picks.length] % running.length];
    finishing.status = outcomes[step % outcomes.length];
  }
  throw new Error('simulation did not settle');
}

describe('readyTasks properties', () => {
  const lanesArb = fc.integer({ min: 1, max: 4 });
  const picksArb = fc.array(fc.nat(), { minLength: 1, maxLength: 8 });

  test('with no blocked task, every task runs to completion and the invariants hold throughout', () => {
    fc.assert(
      fc.property(planArb, lanesArb, picksArb, (plan, lanes, picks) => {
        const final = simulate(plan, lanes, picks, ['done']);
        expect(final.every((t) => t.status === 'done')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test('with blocked tasks, only tasks that wait on an unfinished dependency are left pending', () => {
    const outcomesArb = fc.array(fc.constantFrom<Outcome>('done', 'blocked'), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(planArb, lanesArb, picksArb, outcomesArb, (plan, lanes, picks, outcomes) => {
        const final = simulate(plan, lanes, picks, outcomes);
        const status = new Map(final.map((t) => [t.ref, t.status]));
        for (const t of final.filter((x) => x.status === 'pending')) {
          expect(t.dependsOn.some((dep) => status.get(dep) !== 'done')).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  test('deterministic: the same tasks in any input order give the same refs', () => {
    const statusArb = fc.constantFrom<SchedTask['status']>(
      'pending',
      'running',
      'done',
      'blocked',
      'skipped',
    );
    const withStatuses = planArb.chain((plan) =>
      fc.tuple(...plan.map((t) => statusArb.map((status) => ({ ...t, status })))),
    );
    fc.assert(
      fc.property(
        withStatuses.chain((tasks) =>
          fc.tuple(fc.constant(tasks), fc.shuffledSubarray(tasks, { minLength: tasks.length })),
        ),
        lanesArb,
        ([tasks, shuffled], lanes) => {
          expect(readyTasks(shuffled, lanes)).toEqual(readyTasks(tasks, lanes));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('makespan properties', () => {
  test('lower bound <= greedy makespan <= total work; 1 lane is serial; enough lanes hit the critical path', () => {
    fc.assert(
      fc.property(planArb, fc.integer({ min: 1, max: 4 }), (plan, lanes) => {
        const durations = Object.fromEntries(plan.map((t) => [t.ref, t.duration]));
        const deps = Object.fromEntries(plan.map((t) => [t.ref, t.dependsOn]));
        const total = plan.reduce((sum, t) => sum + t.duration, 0);
        const greedy = idealMakespan(durations, deps, lanes);
        expect(greedy).toBeGreaterThanOrEqual(lowerBoundMakespan(durations, deps, lanes) - 1e-9);
        expect(greedy).toBeLessThanOrEqual(total);
        expect(idealMakespan(durations, deps, 1)).toBe(total);
        expect(idealMakespan(durations, deps, plan.length)).toBe(criticalPathLength(durations, deps));
      }),
      { numRuns: 300 },
    );
  });
});
