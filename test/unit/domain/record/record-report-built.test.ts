/** REPORT.md's "What was built" and reconciliation sections, a correction's fix spec and rationale (pure). */
import fs from 'node:fs';
import path from 'node:path';
import { initialMilestones } from '../../../../src/domain/fleet/fleet';
import type { DecisionCorrection } from '../../../../src/domain/planning/memory';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import { reconciliationPromptLines } from '../../../../src/domain/record/reconciliation';
import { reconciliationReport, whatWasBuilt } from '../../../../src/domain/record/report-built';
import { correctedRationale, withCorrectionScopes } from '../../../../src/domain/saga/decision-fixes';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { PROJECT_ROOT } from '../../../../src/project-root';

function status(): SagaStatus {
  const parsed = parsePlanText(
    fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml'), 'utf8'),
    'greeting.yaml',
  );
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  const milestones = initialMilestones('g', parsed.plan);
  const [t11, t12] = milestones[0]!.tasks;
  Object.assign(t11!, { status: 'integrated', commit: 'a'.repeat(40), changedFiles: ['src/greet.js'] });
  Object.assign(t12!, { status: 'integrated', commit: 'b'.repeat(40), changedFiles: ['test/x.js'] });
  Object.assign(milestones[0]!, { status: 'integrated', integrationCommit: 'c'.repeat(40) });
  return { name: 'g', milestones, reconciliation: null } as unknown as SagaStatus;
}

const correction: DecisionCorrection = {
  number: 1,
  decision: { question: 'Module format', choice: 'CommonJS', citation: 'codebase pattern: package.json' },
  correction: 'ES modules',
};

test('what was built: per milestone, a sentence with the diff total and a bullet per task', () => {
  const text = whatWasBuilt(status(), {
    '1.1': {
      summary: 'Added greet().',
      diff: { files: ['src/greet.js', 'test/greet.test.js'], insertions: 12, deletions: 1 },
    },
    '1.2': { summary: null, diff: null },
  });
  expect(text).toContain('### Milestone 1: Core library — integrated');
  expect(text).toContain(
    '2 tasks of 2 landed on the integration branch, together 2 files changed, +12 −1 lines (integration commit `cccccccccccc`).',
  );
  expect(text).toContain(
    "- **1.1 Add greet()** (integrated, `aaaaaaaaaaaa`): 2 files changed, +12 −1 lines (`src/greet.js`, `test/greet.test.js`). The agent's summary: Added greet().",
  );
  // Recorded as integrated, but git has no merge of it: said so, with the files the record names.
  expect(text).toContain(
    '- **1.2 Default name** (integrated, `bbbbbbbbbbbb`): changed `test/x.js`; no merge of it is on the integration branch.',
  );
  expect(text).toContain('0 tasks of 1 landed on the integration branch.');
});

test('reconciliation findings reach the acceptance prompt and REPORT.md; none, no lines', () => {
  const s = status();
  expect(reconciliationReport(s)).toBeNull();
  expect(reconciliationPromptLines([])).toEqual([]);
  s.reconciliation = {
    at: '2026-01-01T00:00:00.000Z',
    checked: { tasks: 3, evidenceFiles: 0 },
    findings: [{ task: '1.2', text: "recorded as integrated but not merged into 'x'; left as is by u" }],
  };
  expect(reconciliationReport(s)).toContain(
    "- Task 1.2: recorded as integrated but not merged into 'x'; left as is by u",
  );
  expect(reconciliationPromptLines(['a finding'])).toEqual([
    'saga continue found 1 difference(s) between the record and git (REPORT.md lists them; read them before you accept):',
    '- a finding',
  ]);
});

test("a D<n> issue's fix task names the decision; the rationale shows the corrected choice", () => {
  const milestone = {
    id: 2,
    tasks: [{ scope: 'D1: ES modules' }, { scope: 'Polish' }],
  } as unknown as Parameters<typeof withCorrectionScopes>[0];
  const fixed = withCorrectionScopes(milestone, ['D1: ES modules', 'Polish'], [correction]);
  expect(fixed.tasks[0]!.scope).toBe(
    'Correct autonomous decision D1. The question: Module format. The saga chose: CommonJS ' +
      '(codebase pattern: package.json). The user corrected it at acceptance to: ES modules. Change the ' +
      'work so it follows the correction wherever it relied on the earlier choice.',
  );
  expect(fixed.tasks[1]!.scope).toBe('Polish');
  const at = { where: 'acceptance round 1', user: 'ann' };
  const bullet =
    '**Module format:** ES modules — corrected by ann at acceptance round 1 (D1; was "CommonJS", ' +
    'codebase pattern: package.json; [LRN:correction] in decisions.md)';
  expect(correctedRationale(['**Module format:** CommonJS — x', '**Other:** y'], [correction], at)).toEqual([
    bullet,
    '**Other:** y',
  ]);
  expect(correctedRationale([], [correction], at)).toEqual([bullet]);
});
