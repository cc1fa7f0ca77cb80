/** The `edit` answer's text: a plain note, or fields of the task spec (checks, scope, interfaces...). */
import { parseSpecEdit, specEditChange, EDIT_CHECK_TEXT } from '../../../../src/domain/fleet/spec-edit';
import { validateResponse, RespondError } from '../../../../src/domain/saga/interactions';
import { escalationQuestion } from '../../../../src/domain/fleet/blocked-report';
import { currentTaskSpec } from '../../../../src/domain/fleet/spec-changes';
import type { Interaction } from '../../../../src/domain/contract/state';
import type { PlanTask } from '../../../../src/domain/plan';

const ok = (text: string) => {
  const parsed = parseSpecEdit(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};
const error = (text: string) => {
  const parsed = parseSpecEdit(text);
  if (parsed.ok) throw new Error(`parsed: ${JSON.stringify(parsed.value)}`);
  return parsed.error;
};

describe('spec edit text', () => {
  test('plain text without field names stays a note, as before', () => {
    expect(ok('Use a comma after Hello')).toEqual({ note: 'Use a comma after Hello', patch: null });
    // A colon alone does not make a field: only the task's field names do.
    expect(ok('Hint: the greeting is in src/greet.js')).toMatchObject({ patch: null });
  });

  test('check lines replace the checks; text fields take continuation lines; lines before are the note', () => {
    const edit = ok(
      'The old check tested the wrong file.\ncheck: npm test -- greet\n- check: node -e "1"\nscope: Only src/greet.js;\nthe CLI stays.\ninterfaces:',
    );
    expect(edit).toEqual({
      note: 'The old check tested the wrong file.',
      patch: {
        scope: 'Only src/greet.js;\nthe CLI stays.',
        interfaces: '',
        validation: [
          { text: EDIT_CHECK_TEXT, check: 'npm test -- greet' },
          { text: EDIT_CHECK_TEXT, check: 'node -e "1"' },
        ],
      },
    });
  });

  test('what is wrong is named, with its line', () => {
    expect(error('check: grep -q "Bonjour greeting.txt')).toMatch(/^Edit line 1: .*unclosed double quote/);
    expect(error('check:')).toMatch(/^Edit line 1: the check is empty/);
    expect(error('scope: a\nowns: src/x.js')).toMatch(/^Edit line 2: 'owns' cannot be changed by an edit/);
    expect(error('scope: a\nScope: b')).toMatch(/^Edit line 2: 'scope' is given twice/);
    expect(error('evidence:\ncheck: true')).toMatch(/'evidence:' is empty/);
    expect(error('check: true\nand then more')).toMatch(/^Edit line 2 follows a check/);
  });

  test('the escalation question refuses a bad edit before it enters history, and takes a good one', () => {
    const question = escalationQuestion(
      { id: '1.1', key: 'm1t1', title: 'Greet', delegations: 2 },
      { retryable: true, reason: 'Check failed', evidence: 'none' },
    );
    expect(question.prompt).toContain("a line 'check: COMMAND'");
    const pending: Interaction = { ...question, textRequiredFor: ['edit'], owner: 'w', openedAt: 'now' };
    expect(() =>
      validateResponse(pending, false, { interactionId: question.id, choice: 'edit', text: 'check: a |' }),
    ).toThrow(RespondError);
    expect(
      validateResponse(pending, false, { interactionId: question.id, choice: 'edit', text: 'check: true' }),
    ).toMatchObject({ option: 'edit' });
  });

  test('the change an edit answer makes is applied to the spec every later attempt gets', () => {
    const answer = {
      interactionId: 'esc-m1t1-d2',
      choice: 'edit',
      choiceIndex: 2,
      text: 'Wrong check.\ncheck: npm test -- greet',
      user: 'ada',
      answeredAt: '2026-01-01T00:00:00.000Z',
    };
    const change = specEditChange(answer);
    expect(change).toMatchObject({
      source: 'edit',
      by: 'ada',
      text: 'Wrong check. — validation: `npm test -- greet`',
    });
    const spec = { validation: [{ text: 'old', check: 'false' }], scope: 'x' } as unknown as PlanTask;
    expect(currentTaskSpec(spec, [change]).validation).toEqual([
      { text: EDIT_CHECK_TEXT, check: 'npm test -- greet' },
    ]);
    // A note stays a note.
    expect(specEditChange({ ...answer, text: 'Use a comma' })).toEqual({
      source: 'edit',
      by: 'ada',
      at: answer.answeredAt,
      text: 'Use a comma',
    });
  });
});
