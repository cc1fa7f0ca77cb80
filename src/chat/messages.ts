/**
 * Slack messages of the bridge (Block Kit JSON, pure): the notification with one button per option, and
 * the same message after it was answered. Button values carry what the bridge needs to answer, so a button
 * press needs no lookup.
 */
import { z } from 'zod';

export const NotifiedInteractionSchema = z.object({
  id: z.string(),
  kind: z.string(),
  prompt: z.string(),
  options: z.array(z.string()),
  recommended: z.number().int().nullable(),
});
export type NotifiedInteraction = z.infer<typeof NotifiedInteractionSchema>;

/** What a button press carries; `choice` is the option's 1-based number, which the saga accepts. */
export const ButtonValueSchema = z.object({ saga: z.string(), interaction: z.string(), choice: z.string() });
export type ButtonValue = z.infer<typeof ButtonValueSchema>;

export const ANSWER_ACTION_PREFIX = 'saga-answer-';
export const OPEN_UI_ACTION = 'saga-open-ui';

type Block = Record<string, unknown>;
export interface SlackMessage {
  text: string;
  blocks: Block[];
}

/** Cut to `max` characters; an entity (`&lt;`) the cut would split goes whole. */
const clip = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max - 1).replace(/&[a-z]*$/, '')}…` : text;

/**
 * Text of an agent, a tracker or a chat user, in a Slack `mrkdwn` text: `&`, `<` and `>` escaped as Slack
 * asks, so it makes no @channel or @user mention, no link that says one thing and opens another, and no
 * channel reference. Only the saga's own markup (`<@U123>` of displayUser, a Web UI link) stays markup.
 */
export const slackEscape = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const plain = (text: string, max = 75) => ({ type: 'plain_text', text: clip(text, max), emoji: true });
const markdown = (text: string) => ({ type: 'mrkdwn', text: clip(text, 3000) });

/** `slack:U123` (how the bridge records Slack users) becomes a mention; other authors are shown as given. */
export const displayUser = (user: string): string =>
  /^slack:[A-Z0-9]+$/.test(user) ? `<@${user.slice('slack:'.length)}>` : user;

function header(saga: string, interaction: NotifiedInteraction, reminder: number): string {
  const lead =
    reminder > 0 ? `:alarm_clock: Reminder: saga *${saga}* is still waiting` : `Saga *${saga}* is waiting`;
  return `${lead} for ${interaction.kind} \`${interaction.id}\`\n${slackEscape(interaction.prompt)}`;
}

export function notificationMessage(args: {
  saga: string;
  interaction: NotifiedInteraction;
  uiUrl: string;
  reminder: number;
}): SlackMessage {
  const { saga, interaction } = args;
  const buttons: Block[] = interaction.options.map((option, index) => ({
    type: 'button',
    action_id: `${ANSWER_ACTION_PREFIX}${index}`,
    text: plain(option),
    value: JSON.stringify({
      saga,
      interaction: interaction.id,
      choice: String(index + 1),
    } satisfies ButtonValue),
    ...(index === interaction.recommended ? { style: 'primary' } : {}),
  }));
  if (args.uiUrl)
    buttons.push({
      type: 'button',
      action_id: OPEN_UI_ACTION,
      text: plain('Open in Temporal UI'),
      url: args.uiUrl,
    });
  const text = header(saga, interaction, args.reminder);
  return {
    text: clip(text, 3000),
    blocks: [
      { type: 'section', block_id: 'prompt', text: markdown(text) },
      // Slack allows 25 elements per actions block.
      { type: 'actions', block_id: `saga-${interaction.id}`, elements: buttons.slice(0, 25) },
    ],
  };
}

export function answeredMessage(args: {
  saga: string;
  interaction: Pick<NotifiedInteraction, 'id' | 'kind' | 'prompt'>;
  answer: { user: string; choice: string; text?: string | undefined };
  uiUrl: string;
}): SlackMessage {
  const { saga, interaction, answer } = args;
  const answered =
    `:white_check_mark: ${displayUser(answer.user)} answered *${slackEscape(answer.choice)}*` +
    (answer.text ? `: ${slackEscape(answer.text)}` : '');
  const text = `Saga *${saga}*, ${interaction.kind} \`${interaction.id}\`\n${slackEscape(interaction.prompt)}\n${answered}`;
  return {
    text: clip(text, 3000),
    blocks: [
      { type: 'section', block_id: 'prompt', text: markdown(text) },
      ...(args.uiUrl
        ? [{ type: 'context', elements: [markdown(`<${args.uiUrl}|Open in Temporal UI>`)] }]
        : []),
    ],
  };
}

/** A saga's failure: the reason, with a button to the Web UI (no options to answer). */
export function failureMessage(prompt: string, uiUrl: string): SlackMessage {
  const text = clip(`:x: ${slackEscape(prompt)}`, 3000);
  const blocks: Block[] = [{ type: 'section', block_id: 'prompt', text: { type: 'mrkdwn', text } }];
  if (uiUrl)
    blocks.push({
      type: 'actions',
      block_id: 'saga-failed',
      elements: [
        {
          type: 'button',
          action_id: OPEN_UI_ACTION,
          text: { type: 'plain_text', text: 'Open in Temporal UI' },
          url: uiUrl,
        },
      ],
    });
  return { text, blocks };
}

/** A notice that asks nothing (the saga budget's 80 % warning). */
export function noticeMessage(prompt: string): SlackMessage {
  const text = clip(`:warning: ${slackEscape(prompt)}`, 3000);
  return { text, blocks: [{ type: 'section', block_id: 'prompt', text: { type: 'mrkdwn', text } }] };
}
