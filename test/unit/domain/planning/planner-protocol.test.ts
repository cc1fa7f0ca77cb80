/** The planning steps of docs/PROCEDURE.md §2, §5.2 and §9, the pure side: planner answers, intake, checkpoints, learning, unachievable checks. */
import {
  confirmNamePrompt,
  plannerRestatement,
  withRestatement,
} from '../../../../src/domain/request/intake';
import { parseFlags } from '../../../../src/domain/request/flags';
import {
  acceptanceCorrectionLines,
  parseDecisionCorrections,
  resolveSignalConflict,
} from '../../../../src/domain/planning/memory';
import {
  checkpointChoice,
  checkpointInteractionId,
  checkpointOptions,
  reviewedApproval,
} from '../../../../src/domain/planning/plan-review';
import { validatePlan } from '../../../../src/domain/plan';
import { greetingPlan } from '../../../../src/demo/sample-repo';
import { renderMilestoneMd, renderRationaleBlock, renderTaskMd } from '../../../../src/domain/record/render';
import {
  applyUnachievableAnswers,
  unachievableDeviation,
  unachievableFinding,
  unachievableQuestion,
} from '../../../../src/domain/planning/unachievable';
import {
  PlannerCriteriaOutputSchema,
  PlannerQuestionsOutputSchema,
  withAgreedCriteria,
  zodErrors,
} from '../../../../src/domain/planning/planner';

const criteria = [{ id: 'E1', text: 'works', check: 'npm test' }];

describe('planner protocol', () => {
  test('a question needs its recommended option', () => {
    const out = PlannerQuestionsOutputSchema.safeParse({
      questions: [{ id: 'a', text: 'A?', options: ['x', 'y'] }],
    });
    expect(out.success).toBe(false);
    if (!out.success)
      expect(zodErrors(out.error)).toEqual([
        'questions.0.recommended: the 0-based index of the option you recommend is required',
      ]);
    const ok = PlannerQuestionsOutputSchema.parse({
      questions: [{ id: 'a', text: 'A?', options: ['x', 'y'], recommended: 1 }],
    });
    // Older answers without a restatement's shape and unknowns stay valid.
    expect(ok).toMatchObject({ problem: '', shape: '', unknowns: [], decisions: [] });
  });

  test('the criteria stage takes exit criteria, alone or inside a whole plan; none is refused', () => {
    expect(PlannerCriteriaOutputSchema.parse({ exit_criteria: criteria }).exit_criteria).toEqual(criteria);
    expect(
      PlannerCriteriaOutputSchema.parse({ problem: 'p', exit_criteria: criteria, milestones: [] })
        .exit_criteria,
    ).toEqual(criteria);
    const none = PlannerCriteriaOutputSchema.safeParse({ exit_criteria: [] });
    expect(none.success).toBe(false);
    if (!none.success)
      expect(zodErrors(none.error)).toEqual(['exit_criteria: give at least one exit criterion']);
  });

  test('the decomposition keeps the agreed criteria, whatever it answered', () => {
    expect(withAgreedCriteria({ problem: 'p', exit_criteria: [{ id: 'X' }] }, criteria)).toEqual({
      problem: 'p',
      exit_criteria: criteria,
    });
    expect(withAgreedCriteria({ problem: 'p' }, criteria)).toEqual({ problem: 'p', exit_criteria: criteria });
    expect(withAgreedCriteria('not json', criteria)).toBe('not json');
  });
});

describe('intake restatement', () => {
  test("the planner's restatement: problem, shape, unknowns; none without a problem", () => {
    const lines = plannerRestatement({
      problem: ' Greets\nno one. ',
      shape: 'greet()',
      unknowns: ['', 'empty'],
    });
    expect(lines).toEqual(['Problem: Greets no one.', 'Rough shape: greet()', 'Major unknowns:', '- empty']);
    expect(plannerRestatement({ problem: ' ', shape: 'x', unknowns: [] })).toBeNull();
    expect(withRestatement('Q?', ['Problem: p'])).toBe(
      "The planner's restatement of your request:\nProblem: p\n\nQ?",
    );
  });

  test('the name confirmation gives the request as given and no boilerplate unknowns', () => {
    const prompt = confirmNamePrompt({
      name: 'x',
      sagaDir: '/h/x',
      goal: 'Add a dark mode toggle to the settings page',
      repo: '/r/app',
      base: 'main',
      flags: parseFlags('Add a dark mode toggle to the settings page', {}),
      plan: null,
      planSource: null,
      agent: null,
    });
    expect(prompt).toContain('\nRequest: Add a dark mode toggle to the settings page. To be built in');
    expect(prompt).toContain(
      '\nUnknowns in the request itself:\n- None stand out; the planner names the major unknowns once it has read the repository.\n',
    );
    expect(prompt).toContain('Once you confirm, the planner restates the request');
  });
});

describe('plan approval checkpoint (quality-locked)', () => {
  test("the checkpoint's four options; [R] and [N] only where the author can", () => {
    expect(checkpointOptions({ revise: true, newSession: true })).toEqual([
      '[A] Review',
      '[S] Skip review',
      '[R] Revise',
      '[N] New session',
    ]);
    expect(checkpointOptions({ revise: true, newSession: false })).toEqual([
      '[A] Review',
      '[S] Skip review',
      '[R] Revise',
    ]);
    expect(['[A] Review', '[S] Skip review', '[R] Revise', '[N] New session'].map(checkpointChoice)).toEqual([
      'review',
      'skip',
      'revise',
      'new-session',
    ]);
    expect([1, 2].map((n) => checkpointInteractionId('plan-approval', n))).toEqual([
      'plan-approval-review',
      'plan-approval-review-2',
    ]);
  });

  test('an escalated or forced review leaves the approval without a recommendation', () => {
    expect(reviewedApproval('pass')).toEqual({ note: null, recommended: 0 });
    expect(reviewedApproval('skipped')).toEqual({ note: null, recommended: 0 });
    expect(reviewedApproval('escalated')).toMatchObject({ recommended: null });
    expect(reviewedApproval('escalated').note).toMatch(/^The quality-locked review was escalated to you/);
    expect(reviewedApproval('forced')).toMatchObject({ recommended: null });
  });

  test('MILESTONE.md and task specs carry the rationale block after their header', () => {
    const checked = validatePlan({ ...greetingPlan(), rationale: ['**Format:** CJS — codebase'] }, 'p');
    if (!checked.ok) throw new Error(checked.errors.join('\n'));
    const block = renderRationaleBlock(checked.plan, true);
    const m = checked.plan.milestones[0]!;
    for (const md of [renderMilestoneMd(m, null, block), renderTaskMd(m.id, m.tasks[0]!, null, block)]) {
      expect(md).toContain(`\n\n${block}\n\n## `);
      // Right after the header, before the first section of the spec itself.
      const at = md.indexOf('## Recommendation Rationale');
      expect(at).toBeGreaterThan(0);
      expect(at).toBeLessThan(Math.max(md.indexOf('## Goal'), md.indexOf('## Scope')));
    }
    expect(renderMilestoneMd(m, null)).not.toContain('Recommendation Rationale');
  });
});

describe('learning (autonomous mode)', () => {
  const conflict = {
    memory: { choice: 'ESM', citation: 'memory: a/decisions.md' },
    codebase: { choice: 'CJS', citation: 'codebase: package.json', path: 'package.json' },
  };

  test('memory against codebase: the newer signal wins, both are named', () => {
    expect(
      resolveSignalConflict(conflict, {
        memoryAt: '2030-01-02T00:00:00Z',
        codebaseAt: '2029-05-01T10:00:00+02:00',
      }),
    ).toEqual({
      choice: 'ESM',
      citation:
        'Memory said ESM (memory: a/decisions.md, 2030-01-02), codebase said CJS (codebase: package.json, ' +
        '2029-05-01), chose ESM because newer',
    });
    expect(
      resolveSignalConflict(conflict, { memoryAt: '2001-01-01T00:00:00Z', codebaseAt: '2029-05-01' }).choice,
    ).toBe('CJS');
    expect(resolveSignalConflict(conflict, { memoryAt: '2001-01-01', codebaseAt: null }).citation).toMatch(
      /chose ESM because only it has a date$/,
    );
    expect(resolveSignalConflict(conflict, { memoryAt: null, codebaseAt: null }).choice).toBe('CJS');
  });

  test('acceptance lists the decisions an issue line may correct', () => {
    const decisions = [{ question: 'Format', choice: 'CJS', citation: 'codebase' }];
    expect(acceptanceCorrectionLines([])).toEqual([]);
    expect(acceptanceCorrectionLines(decisions)[1]).toBe('D1. Format: CJS — codebase');
    expect(parseDecisionCorrections('D1: ESM\nthe button is blue', decisions).corrections).toEqual([
      { number: 1, decision: decisions[0], correction: 'ESM' },
    ]);
  });
});

describe('unachievable validation', () => {
  const criteria = [
    { id: 'E1', text: 'works', check: 'npm test' },
    { id: 'E2', text: 'kiosk', check: 'kiosk-tool' },
    { id: 'E3', text: 'printer', check: 'printer-tool' },
    { id: 'E4', text: 'screen', check: 'screen-tool' },
  ];
  const finding = unachievableFinding('kiosk-tool', 127);

  test('the finding says which check cannot run and why', () => {
    expect(finding).toBe(
      'its check `kiosk-tool` cannot run with the tools here: the command is not found (exit 127)',
    );
    expect(unachievableFinding('./x', 126)).toContain('cannot be executed (exit 126)');
    expect(unachievableDeviation(criteria[1]!, finding)).toBe(
      `Deviation: exit criterion E2 (kiosk) cannot be checked: ${finding}`,
    );
    expect(unachievableQuestion(2, criteria[1]!, finding)).toMatchObject({
      id: 'unachievable-r2-e2',
      options: ['new check', 'verify by hand', 'drop'],
      textRequiredFor: ['new check'],
      textFormat: 'check-command',
    });
  });

  test("the user's answers: a new check, by hand, dropped; the others stay as they were", () => {
    const answers = new Map([
      ['E2', { choice: 'new check', text: ' test -f kiosk.json ', user: 'ann', finding }],
      ['E3', { choice: 'verify by hand', user: 'ann', finding }],
      ['E4', { choice: 'drop', user: 'ann', finding }],
    ]);
    expect(applyUnachievableAnswers(criteria, answers)).toEqual([
      criteria[0],
      { ...criteria[1], check: 'test -f kiosk.json', finding: `${finding}; replaced by ann with this check` },
      { ...criteria[2], by_hand: true, finding: `${finding}; verified by hand (ann)` },
    ]);
  });
});
