/**
 * Questions on the issue (`intake.questions: issue`, docs/PROCEDURE.md §14): the comment that asks, the
 * aliases (q1, q2, … unique within the saga) that stand for the saga's interaction ids, the commands a reply
 * may hold (`/answer q1 2 [note]`, `/approve [q3]`), and what the issue sync does with a reply. A reply is
 * untrusted text: it only ever becomes the arguments of the saga's validated respond Update, from a user
 * the tracker says may write, and never an instruction.
 */
import { oneTerminalLine, stripControls } from '../text/terminal';
import type { Interaction, RespondInput } from '../contract/state';
import type { IssueReply } from './issue';

/** Every comment the saga writes holds this (workpad, questions, notes): replies skip them. */
export const SAGA_COMMENT_MARK = '<!-- saga:';

/** The questions posted so far: alias, interaction id and options (to turn an option number into text). */
export interface PostedQuestion {
  alias: string;
  interactionId: string;
  kind: Interaction['kind'];
  options: string[];
}
export interface QuestionBook {
  posted: PostedQuestion[];
  /** The next alias's number. */
  next: number;
}

export const emptyQuestionBook = (): QuestionBook => ({ posted: [], next: 1 });

/** The pending interactions not posted yet, each given the next alias; the book with them added. */
export function newQuestions(
  book: QuestionBook,
  pending: readonly Interaction[],
): { book: QuestionBook; added: PostedQuestion[] } {
  const added: PostedQuestion[] = [];
  let next = book.next;
  for (const i of pending) {
    if (i.options.length === 0 || book.posted.some((p) => p.interactionId === i.id)) continue;
    added.push({ alias: `q${next++}`, interactionId: i.id, kind: i.kind, options: [...i.options] });
  }
  return { book: { posted: [...book.posted, ...added], next }, added };
}

/** The hidden line of a questions comment: its aliases and interaction ids (unique per comment). */
export const questionsMarker = (added: readonly PostedQuestion[]): string =>
  `${SAGA_COMMENT_MARK}questions ${added.map((q) => `${q.alias}=${q.interactionId}`).join(' ')} -->`;

/** The one comment that asks `added` (with their prompts from `pending`). */
export function questionsComment(
  sagaName: string,
  added: readonly PostedQuestion[],
  pending: readonly Interaction[],
): string {
  const parts = added.map((q) => {
    const i = pending.find((p) => p.id === q.interactionId);
    const prompt = stripControls(i?.prompt ?? '').trim();
    const options = q.options.map(
      (o, n) => `${n + 1}. ${oneTerminalLine(o)}${i?.recommended === n ? ' (recommended)' : ''}`,
    );
    return [`**${q.alias}** (${q.kind})`, '', quoted(prompt), '', ...options].join('\n');
  });
  const approval = added.some((q) => q.kind === 'plan-approval' && q.options.includes('approve'));
  return [
    questionsMarker(added),
    `Saga \`${sagaName}\` asks:`,
    '',
    parts.join('\n\n'),
    '',
    `Answer with a comment line \`/answer ${added[0]?.alias ?? 'q1'} 2\` (the option's number; text after it is`,
    `passed on as a note)${approval ? ', or `/approve` to approve the plan' : ''}. Only answers from users with`,
    'write access are taken.',
  ].join('\n');
}

const quoted = (text: string): string =>
  text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');

export type IssueCommand =
  | { kind: 'answer'; alias: string; option: number; text: string | null }
  | { kind: 'approve'; alias: string | null; text: string | null };

/** The commands of a comment: lines that start with `/answer` or `/approve` (quoted lines are not). */
export function parseCommands(body: string): { commands: IssueCommand[]; errors: string[] } {
  const commands: IssueCommand[] = [];
  const errors: string[] = [];
  for (const raw of stripControls(body).split('\n')) {
    const line = raw.trim();
    if (!/^\/(answer|approve)\b/i.test(line)) continue;
    const answer = /^\/answer\s+(q\d+)\s+(\d+)(?:\s+(.*))?$/i.exec(line);
    const approve = /^\/approve(?:\s+(q\d+))?(?:\s+(.*))?$/i.exec(line);
    if (answer)
      commands.push({
        kind: 'answer',
        alias: answer[1]!.toLowerCase(),
        option: Number(answer[2]),
        text: answer[3]?.trim() || null,
      });
    else if (approve)
      commands.push({
        kind: 'approve',
        alias: approve[1]?.toLowerCase() ?? null,
        text: approve[2]?.trim() || null,
      });
    else
      errors.push(
        `\`${oneTerminalLine(line).slice(0, 80)}\` is not a command: use \`/answer q1 2\` or \`/approve\``,
      );
  }
  return { commands, errors };
}

/** The user a reply answers as, `<kind>:<login>`, the login made one safe word. */
export const replyUser = (trackerKind: string, login: string): string =>
  `${trackerKind}:${oneTerminalLine(login).trim().replace(/\s+/g, '_').slice(0, 100) || 'unknown'}`;

export type ReplyDecision =
  /** The saga's own comment, or one with no command: nothing to do. */
  | { kind: 'skip' }
  /** A command from a user without write access: not applied; `note` says so on the issue. */
  | { kind: 'ignore'; note: string }
  /** Answers for the respond Update, and problems with the commands that could not become one. */
  | { kind: 'answer'; answers: { alias: string; respond: RespondInput }[]; problems: string[] };

/** What the issue sync does with a reply, given the questions posted so far and the still pending ones. */
export function decideReply(
  reply: IssueReply,
  book: QuestionBook,
  pendingIds: readonly string[],
  trackerKind: string,
): ReplyDecision {
  if (reply.body.includes(SAGA_COMMENT_MARK)) return { kind: 'skip' };
  const { commands, errors } = parseCommands(reply.body);
  if (commands.length === 0 && errors.length === 0) return { kind: 'skip' };
  const user = replyUser(trackerKind, reply.author);
  if (!reply.canWrite)
    return {
      kind: 'ignore',
      note: `Ignored the command in comment ${reply.id} by ${user}: only users with write access may answer the saga's questions.`,
    };
  const answers: { alias: string; respond: RespondInput }[] = [];
  const problems = [...errors];
  for (const command of commands) {
    const target = commandTarget(command, book, pendingIds);
    if ('problem' in target) {
      problems.push(target.problem);
      continue;
    }
    const q = target.question;
    // An option number in range is sent as the option's text; out of range, as typed, so the Update's
    // validator refuses it with its own message.
    const choice =
      command.kind === 'approve' ? 'approve' : (q.options[command.option - 1] ?? String(command.option));
    answers.push({
      alias: q.alias,
      respond: {
        interactionId: q.interactionId,
        choice,
        user,
        ...(command.text ? { text: command.text } : {}),
      },
    });
  }
  return { kind: 'answer', answers, problems };
}

function commandTarget(
  command: IssueCommand,
  book: QuestionBook,
  pendingIds: readonly string[],
): { question: PostedQuestion } | { problem: string } {
  if (command.alias !== null) {
    const question = book.posted.find((q) => q.alias === command.alias);
    return question
      ? { question }
      : { problem: `${command.alias}: this saga asked no question ${command.alias}` };
  }
  const approvals = book.posted.filter(
    (q) =>
      q.kind === 'plan-approval' && q.options.includes('approve') && pendingIds.includes(q.interactionId),
  );
  if (approvals.length === 1) return { question: approvals[0]! };
  return {
    problem:
      approvals.length === 0
        ? '`/approve`: no plan approval is pending'
        : `\`/approve\`: say which, e.g. \`/approve ${approvals[0]!.alias}\``,
  };
}

/** The hidden line of the saga's note about comment `commentId` (one note per comment, also when retried). */
export const noteMarker = (commentId: string): string =>
  `${SAGA_COMMENT_MARK}note ${commentId.replace(/[^\w-]/g, '')} -->`;

/** The note posted back about a reply: what was ignored, refused or could not be read. */
export const noteComment = (commentId: string, lines: readonly string[]): string =>
  [noteMarker(commentId), ...lines.map((l) => `- ${oneTerminalLine(l)}`)].join('\n');
