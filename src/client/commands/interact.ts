/** Commands that answer a saga: respond, approve, revise, accept, report, cancel. */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { parseIssueLines } from '../../domain/planning/acceptance-issues';
import { ACCEPTANCE_CHOICE, acceptChoice, PLAN_APPROVAL_CHOICE } from '../../domain/contract/answer-choices';
import { bool, str, strs } from '../args';
import type { ParsedArgs } from '../command-decl';
import { UserError } from '../errors';
import { cancelSaga, respond, respondToKind } from '../saga-client';
import type { Io } from '../io';

const cliUser = (): string => `cli:${process.env.USER ?? os.userInfo().username}`;

export async function respondCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const [name, interactionId, choice] = args.positionals as [string, string, string];
  const text = str(args, 'text');
  const answer = await respond(await connect(), name, {
    interactionId,
    choice,
    ...(text !== undefined ? { text } : {}),
    user: cliUser(),
  });
  io.out(`Answered ${answer.interactionId}: ${answer.choice}${answer.text ? ` — ${answer.text}` : ''}`);
  return 0;
}

export async function approveCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const [name] = args.positionals as [string];
  const answer = await respondToKind(await connect(), name, 'plan-approval', PLAN_APPROVAL_CHOICE.approve, {
    user: cliUser(),
  });
  io.out(`Approved (${answer.interactionId}). Implementation starts now.`);
  return 0;
}

export async function reviseCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const note = str(args, 'note');
  if (!note?.trim())
    throw new UserError('saga revise: --note TEXT is required (what should change in the plan).');
  const answer = await respondToKind(
    await connect(),
    args.positionals[0]!,
    'plan-approval',
    PLAN_APPROVAL_CHOICE.revise,
    {
      text: note,
      user: cliUser(),
    },
  );
  io.out(`Revision requested (${answer.interactionId}); the planner is revising the plan.`);
  return 0;
}

export async function acceptCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const given = (['fast-forward', 'merge', 'ready'] as const).filter((option) => bool(args, option));
  if (given.length > 1) throw new UserError(`saga accept: give one of --${given.join(', --')}, not several.`);
  const choice = bool(args, 'merge')
    ? ACCEPTANCE_CHOICE.merge
    : bool(args, 'ready')
      ? ACCEPTANCE_CHOICE.markReady
      : acceptChoice(bool(args, 'fast-forward'));
  const answer = await respondToKind(await connect(), args.positionals[0]!, 'acceptance', choice, {
    user: cliUser(),
  });
  io.out(
    choice === ACCEPTANCE_CHOICE.merge
      ? `Merge requested (${answer.interactionId}): the saga merges its pull requests in order.`
      : choice === ACCEPTANCE_CHOICE.markReady
        ? `Ready for review requested (${answer.interactionId}): the saga marks its pull requests ready and asks again.`
        : `Accepted (${answer.interactionId}). The saga is complete.`,
  );
  return 0;
}

export async function reportCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const issues = strs(args, 'issue')
    .map((i) => i.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  if (!issues.length) throw new UserError('saga report: give at least one --issue TEXT.');
  const answer = await respondToKind(
    await connect(),
    args.positionals[0]!,
    'acceptance',
    ACCEPTANCE_CHOICE.reportIssues,
    {
      text: issues.join('\n'),
      user: cliUser(),
    },
  );
  // The respond validator accepted the text, so it parses; issues without a check are asked about first.
  const parsed = parseIssueLines(issues.join('\n'));
  const unchecked = parsed.ok ? parsed.value.filter((i) => i.check === null).length : 0;
  io.out(
    `Reported ${issues.length} issue(s) (${answer.interactionId}); ` +
      (unchecked
        ? `${unchecked} without a check: the saga asks for their checks first (saga status ${args.positionals[0]}).`
        : 'a focused implementation round starts.'),
  );
  return 0;
}

export async function cancelCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const [name] = args.positionals as [string];
  await cancelSaga(await connect(), name);
  io.out(
    `Cancellation requested for saga '${name}': running agents are stopped, work is committed, worktrees removed.`,
  );
  return 0;
}
