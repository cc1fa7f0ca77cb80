/**
 * The `/saga` slash command's text, mirroring the CLI (README "Chat"): `status NAME`,
 * `respond NAME ID CHOICE [-- NOTE]`, `approve NAME`, `revise NAME NOTE`, `accept NAME [--fast-forward]`,
 * `report NAME TEXT`. Pure parsing; the Slack handler runs what it returns.
 */
import { ACCEPTANCE_CHOICE, acceptChoice, PLAN_APPROVAL_CHOICE } from '../domain/contract/answer-choices';
import type { InteractionKind } from '../domain/contract/state';

export type SlashCommand =
  | { type: 'help'; problem?: string }
  | { type: 'status'; saga: string }
  /** Answers a named interaction, or the one pending interaction of `kind`. */
  | {
      type: 'answer';
      saga: string;
      target: { interaction: string } | { kind: InteractionKind };
      choice: string;
      text?: string;
    };

export const SLASH_USAGE = [
  '`/saga status NAME`',
  '`/saga respond NAME ID CHOICE` (add `-- NOTE` for choices that need a note)',
  '`/saga approve NAME` · `/saga revise NAME NOTE`',
  '`/saga accept NAME` (or `accept NAME --fast-forward`)',
  '`/saga report NAME TEXT` (one issue per line)',
].join('\n');

export function parseSlashCommand(text: string): SlashCommand {
  const tokens = [...text.matchAll(/\S+/g)];
  const [verb = '', saga, ...rest] = tokens.map((t) => t[0]);
  // The text from the n-th word on, keeping its line breaks (report takes one issue per line).
  const remainder = (n: number): string => (tokens[n] ? text.slice(tokens[n].index).trim() : '');
  if (!verb || verb === 'help') return { type: 'help' };
  if (!saga) return { type: 'help', problem: `\`${verb}\` needs a saga NAME.` };
  switch (verb) {
    case 'status':
      return { type: 'status', saga };
    case 'approve':
      return {
        type: 'answer',
        saga,
        target: { kind: 'plan-approval' },
        choice: PLAN_APPROVAL_CHOICE.approve,
      };
    case 'accept': {
      const choice = acceptChoice(rest.includes('--fast-forward'));
      return { type: 'answer', saga, target: { kind: 'acceptance' }, choice };
    }
    case 'revise':
    case 'report': {
      const note = remainder(2);
      if (!note) return { type: 'help', problem: `\`${verb}\` needs a text after the saga name.` };
      return verb === 'revise'
        ? {
            type: 'answer',
            saga,
            target: { kind: 'plan-approval' },
            choice: PLAN_APPROVAL_CHOICE.revise,
            text: note,
          }
        : {
            type: 'answer',
            saga,
            target: { kind: 'acceptance' },
            choice: ACCEPTANCE_CHOICE.reportIssues,
            text: note,
          };
    }
    case 'respond': {
      const [interaction] = rest;
      const answer = remainder(3);
      const separator = /\s--(?:\s|$)/.exec(answer);
      const choice = separator ? answer.slice(0, separator.index) : answer;
      const note = separator ? answer.slice(separator.index + separator[0].length) : undefined;
      if (!interaction || !choice.trim())
        return { type: 'help', problem: '`respond` needs NAME, an interaction ID and a CHOICE.' };
      return {
        type: 'answer',
        saga,
        target: { interaction },
        choice: choice.trim(),
        ...(note?.trim() ? { text: note.trim() } : {}),
      };
    }
    default:
      return { type: 'help', problem: `Unknown command \`${verb}\`.` };
  }
}
