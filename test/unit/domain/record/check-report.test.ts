/**
 * REPORT.md's check parts: each check summarised by its real result line, the planner's manual steps per
 * exit criterion, and the criteria and task checks verified by hand (awaiting, then confirmed by the user).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkResultLine } from '../../../../src/domain/record/check-summary';
import { renderReportMd } from '../../../../src/domain/record/completion-report';
import { initialMilestones } from '../../../../src/domain/fleet/fleet';
import { byHandAcceptanceLine, verifiedByUser } from '../../../../src/domain/planning/unachievable';
import { parsePlanText } from '../../../../src/domain/plan/parse-text';
import type { Plan } from '../../../../src/domain/plan';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { parseFlags } from '../../../../src/domain/request/flags';
import { PROJECT_ROOT } from '../../../../src/project-root';

describe('checkResultLine', () => {
  test.each([
    [
      'TAP counts, not the timing',
      'TAP version 13\nok 1 - greets\n# tests 3\n# pass 3\n# fail 0\n# duration_ms 123.8\n',
      '# pass 3, # fail 0',
    ],
    [
      'jest',
      'PASS test/a.test.ts\nTests:       3 passed, 3 total\nSnapshots:   0 total\nTime:        1.2 s\nRan all test suites.\n',
      'Tests:       3 passed, 3 total',
    ],
    [
      'pytest',
      'collected 3 items\n\ntest_a.py ...\n\n============ 3 passed in 0.12s ============\n',
      '============ 3 passed in 0.12s ============',
    ],
    ['mocha', '  greet\n    ✓ works\n\n  3 passing (12ms)\n', '3 passing (12ms)'],
    [
      'cargo',
      'running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored\n\n',
      'test result: ok. 3 passed; 0 failed; 0 ignored',
    ],
    ['anything else: the last non-comment line', 'building\nbuilt 4 files\n# took 2s\n', 'built 4 files'],
    ['only comments: the last line', '# nothing\n# at all\n', '# at all'],
    ['nothing', '\n', ''],
  ])('%s', (_name, output, line) => {
    expect(checkResultLine(output)).toBe(line);
  });
});

function loadPlan(): Plan {
  const file = path.join(PROJECT_ROOT, 'test', 'fixtures', 'plans', 'greeting.yaml');
  const result = parsePlanText(readFileSync(file, 'utf8'), 'greeting.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.plan;
}

const statusFor = (plan: Plan): SagaStatus => ({
  name: 'add-greeting',
  workflowId: 'saga-add-greeting',
  phase: 'acceptance',
  goal: 'Add a greeting',
  repo: '/repos/app',
  flags: parseFlags('Add a greeting', {}),
  executionMode: 'inline',
  pending: [],
  milestones: initialMilestones('add-greeting', plan),
  integrationBranch: 'saga/add-greeting/integration',
  sagaDir: '/home/u/.sagas/add-greeting',
  uiUrl: 'http://localhost:8233',
  round: 1,
  log: [],
});

describe('REPORT.md check parts', () => {
  const base = loadPlan();
  const plan: Plan = {
    ...base,
    exit_criteria: [
      {
        ...base.exit_criteria[0]!,
        manual: ["Run `node -e \"console.log(require('./src/greet')('Ada'))\"`", 'It prints Hello, Ada!'],
      },
      {
        ...base.exit_criteria[1]!,
        check: 'kiosk-tool --replay',
        by_hand: true,
        finding: 'the command is not found (exit 127); verified by hand (tester)',
      },
    ],
  };
  const output = '$ node --test test/greet.test.js\nok 1\n# pass 3\n# fail 0\n# duration_ms 80.1\n';
  const results = [
    { id: 'E1', result: 'passed' as const, evidence: '/s/E1.log', output },
    { id: 'E2', result: 'by-hand' as const, evidence: 'to verify by hand at acceptance' },
  ];

  test("the planner's manual steps replace 're-run the check'; the summary is the result line", () => {
    const md = renderReportMd({ status: statusFor(plan), plan, exitResults: results });
    expect(md).toContain(
      "2. E1 — greet() returns the greeting: Run `node -e \"console.log(require('./src/greet')('Ada'))\"`; " +
        "It prints Hello, Ada!. (Its check: `node --test test/greet.test.js`.) The saga's run: passed, # pass 3, # fail 0.",
    );
    expect(md).toContain('| **passed** | [/s/E1.log](/s/E1.log) | # pass 3, # fail 0 |');
    expect(md).not.toContain('duration_ms 80.1 |');
  });

  test('a criterion verified by hand: the steps, awaiting confirmation, then verified by the user', () => {
    const before = renderReportMd({ status: statusFor(plan), plan, exitResults: results });
    expect(before).toContain(
      '- **Exit criteria passed:** 1 of 2, 1 to verify by hand (Manual verification; accepting confirms)',
    );
    expect(before).toContain(
      '3. E2 — The CLI prints the greeting: check by hand that it holds (its check `kiosk-tool --replay` cannot ' +
        'run here: the command is not found (exit 127); verified by hand (tester)). Accepting the saga confirms you verified it.',
    );
    const after = renderReportMd({
      status: statusFor(plan),
      plan,
      exitResults: verifiedByUser(results, 'ada'),
    });
    expect(after).toContain('- **Exit criteria passed:** 1 of 2, 1 verified by the user');
    expect(after).toContain('Verified by the user: verified by hand by ada at acceptance.');
    expect(after).toContain('| **verified-by-user** |');
  });

  test('task checks left to verify by hand are steps too', () => {
    const status = statusFor(plan);
    status.milestones[0]!.tasks[0]!.specChanges = [
      {
        source: 'edit',
        by: 'ada',
        at: '2026-01-01T00:00:00Z',
        text: 'check `reader-tool` (screen reader) to be verified by hand at acceptance',
        byHand: [{ text: 'the screen reader reads it', check: 'reader-tool' }],
      },
    ];
    const md = renderReportMd({ status, plan, exitResults: results });
    expect(md).toContain(
      'Task 1.1 — the screen reader reads it: check by hand that it holds (its check `reader-tool` cannot run here). Accepting the saga confirms you verified it.',
    );
  });

  test('the acceptance line names the criteria to verify by hand', () => {
    expect(byHandAcceptanceLine([{ id: 'E1', text: 'x', result: 'passed' }])).toBe('');
    expect(
      byHandAcceptanceLine([
        { id: 'E1', text: 'x', result: 'passed' },
        { id: 'E2', text: 'Works on the kiosk', result: 'by-hand' },
      ]),
    ).toBe(
      'Verify by hand before you accept: E2 "Works on the kiosk" (the steps are in the report\'s Manual ' +
        'verification). Accepting confirms you verified it: it counts as verified by the user. If one does not ' +
        'hold, report it as an issue.',
    );
  });
});
