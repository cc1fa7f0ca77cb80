import type { Interaction } from '../../../../src/domain/contract/state';
import {
  decideReply,
  emptyQuestionBook,
  newQuestions,
  parseCommands,
  questionsComment,
  questionsMarker,
  replyUser,
} from '../../../../src/domain/tracker/issue-replies';
import type { IssueReply } from '../../../../src/domain/tracker/issue';

const interaction = (id: string, kind: Interaction['kind'], options: string[]): Interaction => ({
  id,
  kind,
  prompt: `Prompt of ${id}\x1b]52;c;evil\x07`,
  options,
  recommended: 0,
  textRequiredFor: [],
  owner: 'saga-demo',
  openedAt: '2026-01-01T00:00:00Z',
});
const q = interaction('planning-q1', 'question', ['hello', 'hi']);
const approval = interaction('plan-approval-v1', 'plan-approval', ['approve', 'revise', 'reject']);
const reply = (body: string, canWrite = true, author = 'bob'): IssueReply => ({
  id: '42',
  author,
  body,
  at: '2026-01-01T00:00:00Z',
  canWrite,
});

describe('questions on the issue', () => {
  test('new pending questions get the next aliases; posted ones keep theirs', () => {
    const first = newQuestions(emptyQuestionBook(), [q]);
    expect(first.added.map((a) => a.alias)).toEqual(['q1']);
    const second = newQuestions(first.book, [q, approval]);
    expect(second.added.map((a) => [a.alias, a.interactionId])).toEqual([['q2', 'plan-approval-v1']]);
    expect(second.book.next).toBe(3);
  });

  test('the comment lists each question with numbered options, how to answer, and no terminal escapes', () => {
    const { added } = newQuestions(emptyQuestionBook(), [q, approval]);
    const body = questionsComment('demo', added, [q, approval]);
    expect(body.startsWith(questionsMarker(added))).toBe(true);
    expect(questionsMarker(added)).toBe('<!-- saga:questions q1=planning-q1 q2=plan-approval-v1 -->');
    expect(body).toContain('1. hello (recommended)\n2. hi');
    expect(body).toContain('`/answer q1 2`');
    expect(body).toContain('`/approve`');
    expect(body).not.toContain('\x1b');
  });

  test('commands are lines that start with /answer or /approve; quoted ones are not', () => {
    expect(parseCommands('/answer q1 2 because\n> /answer q2 1\n/APPROVE q3')).toEqual({
      commands: [
        { kind: 'answer', alias: 'q1', option: 2, text: 'because' },
        { kind: 'approve', alias: 'q3', text: null },
      ],
      errors: [],
    });
    expect(parseCommands('/answer one').errors).toHaveLength(1);
  });

  test('a writer’s answer becomes the option’s text for the respond Update, as <kind>:<login>', () => {
    const { book } = newQuestions(emptyQuestionBook(), [q, approval]);
    expect(decideReply(reply('/answer q1 2 short'), book, [q.id], 'gitea')).toEqual({
      kind: 'answer',
      answers: [
        { alias: 'q1', respond: { interactionId: q.id, choice: 'hi', user: 'gitea:bob', text: 'short' } },
      ],
      problems: [],
    });
    // Out of range: sent as typed, for the Update's validator to refuse.
    const out = decideReply(reply('/answer q1 9'), book, [q.id], 'gitea');
    expect(out).toMatchObject({ answers: [{ respond: { choice: '9' } }] });
    expect(decideReply(reply('/approve'), book, [approval.id], 'github')).toMatchObject({
      answers: [
        { alias: 'q2', respond: { interactionId: approval.id, choice: 'approve', user: 'github:bob' } },
      ],
    });
  });

  test('unknown aliases and an /approve with nothing to approve are problems, not answers', () => {
    const { book } = newQuestions(emptyQuestionBook(), [q]);
    expect(decideReply(reply('/answer q7 1\n/approve'), book, [q.id], 'gitea')).toEqual({
      kind: 'answer',
      answers: [],
      problems: ['q7: this saga asked no question q7', '`/approve`: no plan approval is pending'],
    });
  });

  test('a reader’s command is ignored with a note; the saga’s own comments and plain talk are skipped', () => {
    const { book } = newQuestions(emptyQuestionBook(), [q]);
    const ignored = decideReply(reply('/answer q1 1', false, 'carol'), book, [q.id], 'gitea');
    expect(ignored).toMatchObject({ kind: 'ignore' });
    expect((ignored as { note: string }).note).toContain('gitea:carol');
    expect(decideReply(reply('<!-- saga:questions q1=x -->\n/answer q1 1'), book, [q.id], 'gitea')).toEqual({
      kind: 'skip',
    });
    expect(decideReply(reply('Looks good to me', false), book, [q.id], 'gitea')).toEqual({ kind: 'skip' });
  });

  test('a login becomes one safe word', () => {
    expect(replyUser('linear', 'Ann \x1b[31mLee\n')).toBe('linear:Ann_Lee');
  });
});
