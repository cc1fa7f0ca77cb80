import { nextStepWhenBlocked } from '../../../../src/domain/fleet/blocked-report';
import { validatePlan } from '../../../../src/domain/plan';
import {
  adjustmentOf,
  adjustmentPlan,
  currentTaskSpec,
  describeAdjustment,
  describeSpecChange,
  SPEC_CHANGE_TEXT_MAX,
  SPEC_CHANGES_MAX,
  specChangeDeviation,
  withSpecChange,
} from '../../../../src/domain/fleet/spec-changes';
import type { PlanTask } from '../../../../src/domain/plan';
import type { SpecChange } from '../../../../src/domain/contract/state';

const change = (text: string, source: SpecChange['source'] = 'edit'): SpecChange => ({
  source,
  by: 'ada',
  at: '2026-12-03T10:20:30.000Z',
  text,
});
const task: PlanTask = {
  id: 1,
  slug: 'greet',
  title: 'Greet',
  depends_on: [],
  scope: 'greet(name)',
  owns: ['src/greet.js'],
  interfaces: '',
  validation_method: 'unit tests',
  validation: [{ text: 'tests pass', check: 'npm test' }],
  evidence: 'test output',
};

describe('spec changes', () => {
  test('a change is appended oldest first; past the cap the oldest goes and long text is cut', () => {
    let changes: SpecChange[] = [];
    for (let i = 1; i <= SPEC_CHANGES_MAX + 2; i++)
      changes = withSpecChange({ specChanges: changes }, change(`c${i}`));
    expect(changes).toHaveLength(SPEC_CHANGES_MAX);
    expect(changes[0]!.text).toBe('c3');
    expect(changes.at(-1)!.text).toBe(`c${SPEC_CHANGES_MAX + 2}`);
    const long = withSpecChange({}, change('x'.repeat(SPEC_CHANGE_TEXT_MAX + 50)));
    expect(long[0]!.text).toHaveLength(SPEC_CHANGE_TEXT_MAX);
    expect(long[0]!.text.endsWith('…')).toBe(true);
  });

  test('the agent gets the planned spec plus the changes; without changes the spec is unchanged', () => {
    expect(currentTaskSpec(task, undefined)).toBe(task);
    expect(currentTaskSpec(task, [])).toBe(task);
    expect(currentTaskSpec(task, [change('Use a comma', 'spec-gap')])).toEqual({
      ...task,
      spec_changes: ['Use a comma (spec gap answered by ada, 2026-12-03 10:20)'],
    });
  });

  test('a change reads as a deviation on one line', () => {
    expect(describeSpecChange(change('two\n  lines', 'adjusted'))).toBe(
      'two lines (spec adjusted by ada, 2026-12-03 10:20)',
    );
    expect(specChangeDeviation('1.2', change('Use a comma'))).toBe(
      'Deviation: task 1.2 spec changed: Use a comma (spec edited by ada, 2026-12-03 10:20)',
    );
  });
});

describe('adjusting a blocked task', () => {
  const plan = { problem: 'Greet.', exit_criteria: [{ id: 'E1', text: 'greets', check: 'npm test' }] };
  const milestone = { id: 2, slug: 'core', title: 'Core', goal: 'greet()' };

  test("the planner's input is a valid plan of the task alone, without its listed changes or dependencies", () => {
    const current = { ...task, depends_on: ['1.1'], spec_changes: ['x'] };
    const one = adjustmentPlan(plan, milestone, current);
    expect(validatePlan(one, 'plan').ok).toBe(true);
    expect(one.milestones[0]!.tasks[0]).toEqual({ ...task, depends_on: [] });
  });

  test('only the adjustable fields that changed are taken; nothing changed is null; a missing task throws', () => {
    const revised = adjustmentPlan(plan, milestone, {
      ...task,
      scope: 'greet(name) with a comma',
      owns: ['elsewhere.js'],
      validation: [{ text: 'loose', check: 'node -e 1' }],
    });
    expect(adjustmentOf(task, 2, revised)).toEqual({
      scope: 'greet(name) with a comma',
      validation: [{ text: 'loose', check: 'node -e 1' }],
    });
    expect(adjustmentOf(task, 2, adjustmentPlan(plan, milestone, task))).toBeNull();
    expect(() => adjustmentOf(task, 3, revised)).toThrow('the revised plan has no task 3.1');
    expect(describeAdjustment({ scope: 'a\nb', validation: [{ text: 't', check: 'node -e 1' }] })).toBe(
      'scope: a b; validation: `node -e 1`',
    );
  });

  test('the agent gets the adjusted fields in order of the changes', () => {
    const first = { ...change('one', 'adjusted'), patch: { scope: 'first' } };
    const second = { ...change('two', 'adjusted'), patch: { scope: 'second', evidence: 'logs' } };
    expect(currentTaskSpec(task, [first, second])).toMatchObject({ scope: 'second', evidence: 'logs' });
  });

  test('a blocked task is re-delegated, then adjusted when its checks failed, then the user decides', () => {
    const step = (streak: number, checksFailed = true, retryable = true) =>
      nextStepWhenBlocked({ streak, retryable, checksFailed });
    expect([step(1), step(2), step(3)]).toEqual(['redelegate', 'adjust', 'ask']);
    // A crash or timeout is not something the spec resolves; a blocker no delegation fixes is asked at once.
    expect([step(1, false), step(2, false)]).toEqual(['redelegate', 'ask']);
    expect(step(1, true, false)).toBe('ask');
  });
});
