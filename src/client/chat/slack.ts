/**
 * The Slack app (README "Chat"): one endpoint, `POST /slack/events`, for the `/saga` slash command, button
 * presses and events. The bridge verifies Slack's v0 signature itself, then hands the request to a Bolt App
 * through a minimal receiver, so the HTTP server stays in our hands (body limits, exact statuses).
 */
import { App, LogLevel, type Receiver, type ReceiverEvent } from '@slack/bolt';
import type { Client } from '@temporalio/client';
import { UserError } from '../errors';
import { getStatus } from '../saga-client';
import type { Approvers } from '../../chat/allowlist';
import { deliverChatAnswer, type AnswerOutcome } from './answer';
import { header, type BridgeRequest, type BridgeResponse } from './http-types';
import { ANSWER_ACTION_PREFIX, ButtonValueSchema, OPEN_UI_ACTION, slackEscape } from '../../chat/messages';
import { REPLAY_REASON, type ReplayCache } from '../../chat/replay-cache';
import { SLASH_USAGE, parseSlashCommand, type SlashCommand } from '../../chat/slash';
import { SLACK_SIGNATURE_HEADER, SLACK_TIMESTAMP_HEADER, verifySignature } from '../../chat/signing';
import { formatStatus } from '../../chat/status-text';

/** Slack gives up on a response after 3 s; answer before that even if a listener is still busy. */
const ACK_DEADLINE_MS = 2_500;

export interface SlackDeps {
  client: Client;
  approvers: Approvers;
  signingSecret: string;
  botToken: string | null;
  apiUrl: string;
  /** Each signed request is accepted once within the signature window. */
  replays: ReplayCache;
  log: (line: string) => void;
}

/** Bolt's receiver contract, reduced to "process this parsed request and tell me what to answer". */
class BridgeReceiver implements Receiver {
  private app: App | undefined;
  init(app: App): void {
    this.app = app;
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }

  async dispatch(body: Record<string, unknown>, retryNum: number | undefined): Promise<BridgeResponse> {
    const reply: { acked: boolean; body?: unknown } = { acked: false };
    const event: ReceiverEvent = {
      body,
      ...(retryNum !== undefined ? { retryNum } : {}),
      ack: async (response?: unknown) => {
        if (reply.acked) return;
        reply.acked = true;
        reply.body = response;
      },
    };
    // Listeners answer the saga before acking, so the reply can say what happened; Slack's deadline caps the wait.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.app!.processEvent(event).catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, ACK_DEADLINE_MS))),
    ]);
    clearTimeout(timer);
    // Unhandled events are still answered 200, so Slack does not retry them.
    return { status: 200, body: reply.body ?? '' };
  }
}

export function createSlackHandler(
  deps: SlackDeps,
): (req: BridgeRequest, nowSeconds: number) => Promise<BridgeResponse> {
  const receiver = new BridgeReceiver();
  const app = new App({
    receiver,
    // A single-workspace app: the bot token is fixed; no auth.test round trip on start.
    authorize: async () => ({
      botToken: deps.botToken ?? undefined,
      botId: 'saga-bridge',
      botUserId: 'saga-bridge',
    }),
    clientOptions: { slackApiUrl: deps.apiUrl, retryConfig: { retries: 0 } },
    logLevel: LogLevel.ERROR,
    convoStore: false,
    ignoreSelf: false,
  });
  app.error(async (error) => deps.log(`slack: listener failed: ${error.message}`));

  app.command('/saga', async ({ command, ack }) => {
    const reply = await runSlashCommand(parseSlashCommand(command.text ?? ''), command.user_id, deps);
    await ack({ response_type: 'ephemeral', text: reply });
  });

  app.action(
    { type: 'block_actions', action_id: new RegExp(`^${ANSWER_ACTION_PREFIX}\\d+$`) },
    async ({ ack, body, action, client }) => {
      await ack();
      const user = body.user.id;
      const value = ButtonValueSchema.safeParse(safeJson('value' in action ? action.value : undefined));
      const outcome: AnswerOutcome = value.success
        ? await deliverChatAnswer(deps.client, deps.approvers, { ...value.data, user }, `slack:${user}`)
        : { ok: false, status: 400, refusal: 'Malformed', reason: 'This button carries no saga answer.' };
      deps.log(`slack: button by ${user}: ${outcome.ok ? 'answered' : `refused (${outcome.refusal})`}`);
      // Success shows in the original message, which the saga's worker updates for every answer.
      if (!outcome.ok && body.channel?.id) {
        await client.chat.postEphemeral({
          channel: body.channel.id,
          user,
          text: politeRefusal(outcome, value.data?.saga),
        });
      }
    },
  );
  // The link button opens the Web UI in the browser; Slack still reports the press.
  app.action({ type: 'block_actions', action_id: OPEN_UI_ACTION }, async ({ ack }) => ack());

  return async (req, nowSeconds) => {
    const timestamp = header(req, SLACK_TIMESTAMP_HEADER);
    const signature = header(req, SLACK_SIGNATURE_HEADER);
    const verified = verifySignature({
      version: 'v0',
      secret: deps.signingSecret,
      timestamp,
      signature,
      body: req.rawBody,
      nowSeconds,
    });
    if (!verified.ok)
      return { status: 401, body: { ok: false, error: `Unauthenticated: ${verified.reason}.` } };
    if (!deps.replays.firstUse(`slack:${signature}`, Number(timestamp), nowSeconds))
      return { status: 401, body: { ok: false, error: `Unauthenticated: ${REPLAY_REASON}.` } };
    const body = parseSlackBody(req);
    if (!body) return { status: 400, body: { ok: false, error: 'Malformed Slack request body.' } };
    if (body.type === 'url_verification') return { status: 200, body: { challenge: body.challenge } };
    if (body.ssl_check) return { status: 200, body: '' };
    const retry = header(req, 'X-Slack-Retry-Num');
    return receiver.dispatch(body, retry ? Number(retry) : undefined);
  };
}

/** Slash commands and interactivity come form-encoded (buttons as a `payload` JSON field); events as JSON. */
function parseSlackBody(req: BridgeRequest): Record<string, unknown> | null {
  const type = header(req, 'content-type') ?? '';
  if (type.includes('application/json')) {
    const json = safeJson(req.rawBody);
    return json && typeof json === 'object' ? (json as Record<string, unknown>) : null;
  }
  const form = Object.fromEntries(new URLSearchParams(req.rawBody));
  if (typeof form.payload === 'string') {
    const payload = safeJson(form.payload);
    return payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : null;
  }
  return form;
}

function safeJson(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function politeRefusal(outcome: Extract<AnswerOutcome, { ok: false }>, saga: string | undefined): string {
  switch (outcome.refusal) {
    case 'AlreadyAnswered':
      return `Thanks — this was already answered, so your press changed nothing. (${slackEscape(outcome.reason)})`;
    case 'NotAllowed':
      return `Sorry, you are not on the list of approvers${saga ? ` for saga ${slackEscape(saga)}` : ''}, so nothing changed.`;
    case 'TextRequired':
      return `${slackEscape(outcome.reason.replace(/: pass --text.*$/, ''))}: answer with \`/saga respond ${slackEscape(saga ?? 'NAME')} ID CHOICE -- your note\`.`;
    default:
      return `Sorry, that answer was not accepted: ${slackEscape(outcome.reason)}`;
  }
}

async function runSlashCommand(command: SlashCommand, user: string, deps: SlackDeps): Promise<string> {
  if (command.type === 'help')
    return `${command.problem ? `${command.problem}\n` : ''}Usage:\n${SLASH_USAGE}`;
  try {
    // Status shows prompts and plans, so it is for approvers only, like every other command.
    if (!deps.approvers.mayAnswer(command.saga, user))
      return command.type === 'status'
        ? `:no_entry: You are not on the list of approvers for saga ${slackEscape(command.saga)}, so its status is not shown.`
        : `:no_entry: You are not on the list of approvers for saga ${slackEscape(command.saga)}; nothing changed.`;
    if (command.type === 'status') return formatStatus(await getStatus(deps.client, command.saga));
    let interaction: string;
    if ('interaction' in command.target) interaction = command.target.interaction;
    else {
      const kind = command.target.kind;
      const status = await getStatus(deps.client, command.saga);
      const pending = status.pending.find((p) => p.kind === kind);
      if (!pending) {
        const waiting = status.pending.map((p) => `\`${p.id}\` (${p.kind})`).join(', ') || 'nothing';
        return `:no_entry: Saga ${slackEscape(command.saga)} is not waiting for ${kind}; it waits for ${waiting}. Nothing changed.`;
      }
      interaction = pending.id;
    }
    const outcome = await deliverChatAnswer(
      deps.client,
      deps.approvers,
      {
        saga: command.saga,
        interaction,
        choice: command.choice,
        user,
        ...(command.text ? { text: command.text } : {}),
      },
      `slack:${user}`,
    );
    deps.log(`slack: /saga by ${user}: ${outcome.ok ? 'answered' : `refused (${outcome.refusal})`}`);
    // Refusals quote the answer and the options: text of users and agents.
    if (!outcome.ok) return `:no_entry: ${slackEscape(outcome.reason)} Nothing changed.`;
    return `:white_check_mark: Answered \`${outcome.answer.interactionId}\` of saga ${slackEscape(command.saga)}: *${slackEscape(outcome.answer.choice)}*.`;
  } catch (error) {
    if (error instanceof UserError) return `:no_entry: ${slackEscape(error.message)}`;
    throw error;
  }
}
