/**
 * Closing ambiguity: new decisions only, unconfident substantive ones asked back, [D] adopting the
 * planner's recommendation, and the approval question of a plan version.
 */
import {
  autonomyInsufficientEntry,
  correctionsLine,
  freshDecisions,
  planApprovalRequest,
  replyToQuestion,
  triageDecisions,
} from '../../../../src/domain/planning/elicitation';
import {
  AUTONOMY_INSUFFICIENT_NOTE,
  type PlannerDecision,
  type PlannerQuestion,
} from '../../../../src/domain/planning/planner';
import type { Answer } from '../../../../src/domain/contract/state';

const decision = (question: string, confident: boolean, substantive = true): PlannerDecision => ({
  question,
  choice: 'x',
  citation: 'c',
  confident,
  substantive,
});
const question: PlannerQuestion = {
  id: 'q1',
  text: 'Which port?',
  options: ['80', '8080'],
  recommended: 1,
  substantive: true,
};
const reply = (choice: string, text?: string): Answer =>
  ({ interactionId: 'q1', choice, user: 'ann', ...(text ? { text } : {}) }) as Answer;

describe('elicitation', () => {
  test('only decisions neither decided nor answered before are fresh', () => {
    const fresh = freshDecisions(
      [decision('a', true), decision('b', true), decision('c', true)],
      [decision('a', true)],
      [{ question: 'b', answer: 'y' }],
    );
    expect(fresh.map((d) => d.question)).toEqual(['c']);
  });

  test('unconfident substantive decisions are asked back, the rest stand in order', () => {
    const all = [
      decision('a', false),
      decision('b', true),
      decision('c', false, false),
      decision('d', false),
    ];
    const { decided, unconfident } = triageDecisions(all);
    expect(decided.map((d) => d.question)).toEqual(['b', 'c']);
    expect(unconfident.map((d) => d.question)).toEqual(['a', 'd']);
  });

  test('a reply records the choice; [D] adopts the recommended option', () => {
    expect(replyToQuestion(question, reply('80', 'legacy'))).toEqual({
      answer: { question: 'Which port?', answer: '80', text: 'legacy' },
      adopted: null,
    });
    expect(replyToQuestion(question, reply('[D] default'))).toEqual({
      answer: { question: 'Which port?', answer: '8080' },
      adopted: { question: 'Which port?', choice: '8080' },
    });
  });

  test('the insufficient-autonomy entry names the round and the count', () => {
    const entry = autonomyInsufficientEntry(3, 2, 'T');
    expect(entry.title).toBe(AUTONOMY_INSUFFICIENT_NOTE);
    expect(entry.lines[0]).toContain('All 3 substantive decision(s) of round 2 needed asking');
  });

  test('the approval question', () => {
    const plain = planApprovalRequest(2, 'd/SAGA.md', { note: null, recommended: 0 }, null, []);
    expect(plain).toEqual({
      id: 'plan-approval-2',
      kind: 'plan-approval',
      prompt: 'Approve the plan (version 2) written to d/SAGA.md?',
      options: ['approve', 'revise', 'reject'],
      recommended: 0,
      textRequiredFor: ['revise'],
    });
    const noted = planApprovalRequest(1, 'd/SAGA.md', { note: 'Forced.', recommended: null }, '~$3', []);
    expect(noted.prompt.split('\n')).toEqual([
      'Approve the plan (version 1) written to d/SAGA.md?',
      'Forced.',
      '~$3',
    ]);
    expect(noted.recommended).toBeNull();
  });

  test('the corrections line', () => {
    const corrections = [{ number: 1, decision: decision('Which port?', true), correction: '80' }];
    expect(correctionsLine(corrections)).toBe('[LRN:correction] D1 Which port? → 80');
  });
});
