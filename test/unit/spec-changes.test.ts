import {
  currentTaskSpec,
  describeSpecChange,
  SPEC_CHANGE_TEXT_MAX,
  SPEC_CHANGES_MAX,
  specChangeDeviation,
  withSpecChange,
} from '../../src/domain/spec-changes';
import type { PlanTask } from '../../src/domain/plan';
import type { SpecChange } from '../../src/domain/state';

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
