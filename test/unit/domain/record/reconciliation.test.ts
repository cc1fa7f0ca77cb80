/** What `saga continue` asks git and the evidence, and how the saga keeps and shows what differs (pure). */
import { initialMilestones } from '../../../../src/domain/fleet/fleet';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import {
  evidenceToCheck,
  gitExpectations,
  reconciliationInput,
  reconciliationLogLines,
  taskFinding,
} from '../../../../src/domain/record/reconciliation';
import { parseReconciliationInput } from '../../../../src/domain/contract/reconciliation';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../../src/project-root';

function milestones() {
  const parsed = parsePlanText(
    fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml'), 'utf8'),
    'greeting.yaml',
  );
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const ms = initialMilestones('g', parsed.plan);
  const [t11, t12] = ms[0]!.tasks;
  Object.assign(t11!, { status: 'integrated', commit: 'a'.repeat(40), evidence: ['/s/runs/a.log'] });
  Object.assign(t12!, { status: 'blocked', commit: 'b'.repeat(40), evidence: ['/s/runs/b.log'] });
  return ms;
}

test('only integrated tasks must be merged; only finished tasks have their evidence spot-checked', () => {
  const ms = milestones();
  expect(gitExpectations(ms).map((t) => [t.key, t.expectMerged])).toEqual([
    ['m1t1', true],
    ['m1t2', false],
    ['m2t1', false],
  ]);
  expect(evidenceToCheck(ms)).toEqual([{ task: '1.1', path: '/s/runs/a.log' }]);
  expect(taskFinding(ms, { key: 'm1t2', text: 'x' })).toEqual({ task: '1.2', text: 'x' });
  expect(taskFinding(ms, { key: null, text: 'stray' })).toEqual({ task: null, text: 'stray' });
});

test('log lines say what differs, or what was checked and agrees', () => {
  const checked = { tasks: 3, evidenceFiles: 1 };
  expect(reconciliationLogLines({ findings: [], checked })).toEqual([
    'Reconciliation: git and the evidence agree with the record (3 task(s), 1 evidence file(s) checked)',
  ]);
  expect(
    reconciliationLogLines({
      findings: [
        { task: '1.1', text: 'gone' },
        { task: null, text: 'stray' },
      ],
      checked,
    }),
  ).toEqual(['Reconciliation: task 1.1: gone', 'Reconciliation: stray']);
});

test('many findings are capped with a count; bad input is refused naming what is wrong', () => {
  const many = Array.from({ length: 250 }, (_, i) => ({ task: null, text: `f${i}` }));
  const capped = reconciliationInput(many, { tasks: 1, evidenceFiles: 0 });
  expect(capped.findings).toHaveLength(200);
  expect(capped.findings[199]!.text).toBe("…and 51 more (see saga continue's output)");
  expect(parseReconciliationInput(capped)).toEqual(capped);
  expect(() =>
    parseReconciliationInput({ findings: many, checked: { tasks: -1, evidenceFiles: 0 } }),
  ).toThrow(/reconcile: invalid input: findings: .*200.*; checked\.tasks: /);
  expect(() =>
    parseReconciliationInput({
      findings: [{ task: '1.1', text: '' }],
      checked: { tasks: 1, evidenceFiles: 0 },
    }),
  ).toThrow('findings.0.text');
});
