/**
 * Acceptance issues and their checks (pure): the `ISSUE :: check: COMMAND` line syntax, the errors bad input
 * gets (and that the respond validator refuses it), the fix milestone built from the issues, and the rule
 * that a fix changing no files is blocked.
 */
import { checkCommand, parseIssueLines } from '../../../../src/domain/planning/acceptance-issues';
import { issuesMilestone, NO_CHANGES_REASON, noChangesBlock } from '../../../../src/domain/fleet/fleet';
import { RespondError, validateResponse } from '../../../../src/domain/saga/interactions';
import { PlanSchema, type Plan } from '../../../../src/domain/plan';
import type { Interaction } from '../../../../src/domain/contract/state';

const errorOf = (text: string): string => {
  const parsed = parseIssueLines(text);
  if (parsed.ok) throw new Error(`parsed: ${JSON.stringify(parsed.value)}`);
  return parsed.error;
};

describe('acceptance issue lines', () => {
  test('one issue per line, each with an optional check after a standalone ::', () => {
    expect(
      parseIssueLines(
        'The greeting must be in French :: check: grep -q Bonjour greeting.txt\n\n- Use std::string in docs\r\nCLI exits 1 ::CHECK:  node bin/greet.js  ',
      ),
    ).toEqual({
      ok: true,
      value: [
        { text: 'The greeting must be in French', check: 'grep -q Bonjour greeting.txt' },
        { text: 'Use std::string in docs', check: null },
        { text: 'CLI exits 1', check: 'node bin/greet.js' },
      ],
    });
  });

  test('bad input is named with its line', () => {
    expect(errorOf('  \n \n')).toMatch(/^Report at least one issue, one per line/);
    expect(errorOf('-\nok')).toMatch(/^Issue line 1 \('-'\) has no issue text/);
    expect(errorOf('fine\n:: check: true')).toMatch(/^Issue line 2 .* has no issue text/);
    expect(errorOf('French :: chek: grep -q Bonjour x')).toMatch(
      /^Issue line 1 .*: after '::' write 'check: COMMAND'/,
    );
    expect(errorOf('French :: check:   ')).toMatch(/^Issue line 1 .*: the check is empty/);
    expect(errorOf('French :: check: grep -q "Bonjour greeting.txt')).toBe(
      'Issue line 1 (\'French :: check: grep -q "Bonjour greeting.txt\'): the check `grep -q "Bonjour greeting.txt` has an unclosed double quote.',
    );
    expect(errorOf(Array.from({ length: 21 }, (_, i) => `issue ${i}`).join('\n'))).toMatch(/at most 20/);
  });

  test('check commands: quoting and dangling operators', () => {
    expect(checkCommand(" grep -q 'it''s' a.txt && test -f b ")).toEqual({
      ok: true,
      value: "grep -q 'it''s' a.txt && test -f b",
    });
    expect(checkCommand('echo "a \\" b"')).toEqual({ ok: true, value: 'echo "a \\" b"' });
    expect(checkCommand("grep -q 'x")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/unclosed single quote/),
    });
    expect(checkCommand('npm test &&')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/ends with an operator/),
    });
    expect(checkCommand('| grep x')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/starts with an operator/),
    });
    expect(checkCommand('echo \\')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/lone backslash/),
    });
    expect(checkCommand('')).toMatchObject({ ok: false, error: expect.stringMatching(/the check is empty/) });
  });

  test('the respond validator refuses text that does not fit the interaction, naming what is wrong', () => {
    const interaction: Interaction = {
      id: 'acceptance-1',
      kind: 'acceptance',
      prompt: 'Review',
      options: ['accept', 'report issues'],
      recommended: 0,
      textRequiredFor: ['report issues'],
      textFormat: 'acceptance-issues',
      owner: 'saga-x',
      openedAt: '2026-01-01T00:00:00Z',
    };
    const answer = (choice: string, text?: string) =>
      validateResponse(interaction, false, { interactionId: 'acceptance-1', choice, text, user: 'u' });
    expect(answer('accept', ':: nonsense')).toEqual({ index: 0, option: 'accept' }); // text unused
    expect(answer('report issues', 'French :: check: grep -q Bonjour g.txt')).toEqual({
      index: 1,
      option: 'report issues',
    });
    expect(() => answer('report issues', 'French :: check: grep "x')).toThrow(RespondError);
    expect(() => answer('report issues', 'French :: check: grep "x')).toThrow(/unclosed double quote/);
  });
});

describe('the fix milestone', () => {
  const plan: Plan = PlanSchema.parse({
    problem: 'p',
    exit_criteria: [{ id: 'E1', text: 'greeting exists', check: 'test -f greeting.txt' }],
    milestones: [
      {
        id: 1,
        slug: 'core',
        title: 'Core',
        goal: 'g',
        tasks: [
          {
            id: 1,
            slug: 'greet',
            title: 'Greet',
            scope: 's',
            owns: ['greeting.txt'],
            validation_method: 'command',
            validation: [{ text: 't', check: 'true' }],
            evidence: 'e',
          },
        ],
      },
    ],
  });

  test("each task is validated by its issue's check, then the exit criteria, and must change files", () => {
    const m = issuesMilestone(
      plan,
      [
        { text: 'The greeting must be in French', check: 'grep -q Bonjour greeting.txt' },
        { text: 'Polish the wording', check: null },
      ],
      1,
    );
    expect(m.validation).toEqual([
      { text: 'Fixed: The greeting must be in French', check: 'grep -q Bonjour greeting.txt' },
      { text: 'greeting exists', check: 'test -f greeting.txt' },
    ]);
    expect(m.tasks[0]).toMatchObject({
      slug: 'the-greeting-must-be-in-french',
      requires_changes: true,
      validation: [
        { text: 'Fixed: The greeting must be in French', check: 'grep -q Bonjour greeting.txt' },
        { text: 'greeting exists', check: 'test -f greeting.txt' },
      ],
    });
    expect(m.tasks[1]).toMatchObject({
      requires_changes: true,
      validation_method: expect.stringMatching(/^review only/),
      validation: [{ text: 'greeting exists', check: 'test -f greeting.txt' }],
    });
    // The plan with the new milestone is still a valid plan.
    expect(PlanSchema.safeParse({ ...plan, milestones: [...plan.milestones, m] }).success).toBe(true);
  });

  test('a pass that changed no files is blocked; earlier delegations count', () => {
    const fix = { requires_changes: true };
    expect(noChangesBlock(fix, [], { status: 'passed', changedFiles: [] })).toBe(NO_CHANGES_REASON);
    expect(NO_CHANGES_REASON).toMatch(/^made no changes/);
    expect(noChangesBlock(fix, [], { status: 'passed', changedFiles: ['a'] })).toBeNull();
    expect(noChangesBlock(fix, ['a'], { status: 'passed', changedFiles: [] })).toBeNull();
    expect(noChangesBlock(fix, [], { status: 'blocked', changedFiles: [] })).toBeNull();
    expect(noChangesBlock({}, [], { status: 'passed', changedFiles: [] })).toBeNull();
  });
});
