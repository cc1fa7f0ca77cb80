/**
 * Chat notifications of a saga worker: when the saga starts waiting (and on each reminder) post to Slack
 * and/or SAGA_NOTIFY_URL (signed with SAGA_NOTIFY_SECRET); when it is answered, update the Slack messages to show who answered what.
 * Idempotent per interaction: a record under `<sagaHome>/.chat/<saga>/<interaction>.json` remembers what was
 * sent, so a retried activity never posts twice. Configuration comes from the worker's environment.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure, log } from '@temporalio/activity';
import { z } from 'zod';
import { ChatConfigError, loadNotifyConfig, type NotifyConfig } from '../chat/config';
import {
  answeredMessage,
  notificationMessage,
  OPEN_UI_ACTION,
  type NotifiedInteraction,
  type SlackMessage,
} from '../chat/messages';
import { postSlackMessage, postWebhookNotification, updateSlackMessage } from '../chat/outbound';
import { nowSeconds } from '../chat/signing';

const SlackRefSchema = z.object({ channel: z.string(), ts: z.string() });
const RecordSchema = z.object({
  interaction: z.object({ id: z.string(), kind: z.string(), prompt: z.string() }),
  /** Slack messages by reminder number (0 = the first notification). */
  slack: z.record(z.string(), SlackRefSchema).default({}),
  /** Reminder numbers already delivered to SAGA_NOTIFY_URL. */
  webhook: z.array(z.number()).default([]),
});
type NotifyRecord = z.infer<typeof RecordSchema>;

export interface NotifyInteractionInput {
  saga: string;
  interaction: NotifiedInteraction;
  uiUrl: string;
  /** 0 for the first notification, n for the n-th reminder. */
  reminder: number;
}

export interface NotifyAnsweredInput {
  saga: string;
  interactionId: string;
  answer: { user: string; choice: string; text?: string | undefined };
  uiUrl: string;
}

export interface NotifyNoticeInput {
  saga: string;
  /** Names the notice (one send per id). */
  id: string;
  kind: string;
  prompt: string;
  uiUrl?: string;
}

export interface NotifyFailureInput {
  saga: string;
  /** The failed run: one notification per run (a continued saga that fails again is announced again). */
  runId: string;
  /** One line (domain/saga/failure.ts). */
  reason: string;
  uiUrl: string;
}

/** The interaction-shaped body a failure is announced with (DESIGN.md 4.7 body; no options to answer). */
export const failureNotice = (input: NotifyFailureInput): NotifiedInteraction => ({
  id: 'saga-failed',
  kind: 'failure',
  prompt: `Saga ${input.saga} failed: ${input.reason}`,
  options: [],
  recommended: null,
});

function failureSlackMessage(input: NotifyFailureInput): SlackMessage {
  const text = `:x: ${failureNotice(input).prompt}`.slice(0, 3000);
  const blocks: SlackMessage['blocks'] = [
    { type: 'section', block_id: 'prompt', text: { type: 'mrkdwn', text } },
  ];
  if (input.uiUrl)
    blocks.push({
      type: 'actions',
      block_id: 'saga-failed',
      elements: [
        {
          type: 'button',
          action_id: OPEN_UI_ACTION,
          text: { type: 'plain_text', text: 'Open in Temporal UI' },
          url: input.uiUrl,
        },
      ],
    });
  return { text, blocks };
}

function noticeSlackMessage(prompt: string): SlackMessage {
  const text = `:warning: ${prompt}`.slice(0, 3000);
  return { text, blocks: [{ type: 'section', block_id: 'prompt', text: { type: 'mrkdwn', text } }] };
}

const SAFE_NAME = /^[a-z0-9][a-z0-9.-]*$/;

export function createNotifyActivities(deps: { sagaHome: string; env?: NodeJS.ProcessEnv }) {
  let config: NotifyConfig | undefined;
  const loadConfig = (): NotifyConfig => {
    try {
      config ??= loadNotifyConfig(deps.env ?? process.env);
      return config;
    } catch (error) {
      if (error instanceof ChatConfigError)
        throw ApplicationFailure.nonRetryable(error.message, 'ChatConfigError');
      throw error;
    }
  };

  const recordFile = (saga: string, interactionId: string): string => {
    if (!SAFE_NAME.test(saga) || !SAFE_NAME.test(interactionId))
      throw ApplicationFailure.nonRetryable(
        `Not a saga/interaction name: ${saga}/${interactionId}`,
        'ChatInputError',
      );
    return path.join(deps.sagaHome, '.chat', saga, `${interactionId}.json`);
  };
  const readRecord = async (file: string): Promise<NotifyRecord | null> => {
    try {
      return RecordSchema.parse(JSON.parse(await fs.readFile(file, 'utf8')));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };
  const writeRecord = async (file: string, record: NotifyRecord): Promise<void> => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(record, null, 2));
    await fs.rename(tmp, file);
  };

  /** Posts a notice once to each configured destination (a record remembers what was sent). */
  async function sendNotice(
    saga: string,
    recordId: string,
    notice: NotifiedInteraction,
    slackMessage: SlackMessage,
    uiUrl: string,
  ): Promise<{ sent: boolean }> {
    const cfg = loadConfig();
    if (!cfg.slack && !cfg.webhook) return { sent: false };
    const file = recordFile(saga, recordId);
    const { id, kind, prompt } = notice;
    const record = (await readRecord(file)) ?? {
      interaction: { id, kind, prompt },
      slack: {},
      webhook: [],
    };
    if (cfg.slack && !record.slack['0']) {
      record.slack['0'] = await postSlackMessage(cfg.slack, slackMessage);
      await writeRecord(file, record);
    }
    if (cfg.webhook && !record.webhook.includes(0)) {
      const notification = { saga, interaction: notice, uiUrl };
      await postWebhookNotification(cfg.webhook, notification, nowSeconds());
      record.webhook.push(0);
      await writeRecord(file, record);
    }
    return { sent: true };
  }
  return {
    /**
     * Returns how long the saga waits before the first reminder (null: nowhere to notify, so no reminders)
     * and how many reminders it sends at most.
     */
    async notifyInteraction(
      input: NotifyInteractionInput,
    ): Promise<{ remindAfterMs: number | null; maxReminders?: number }> {
      const cfg = loadConfig();
      if (!cfg.slack && !cfg.webhook) return { remindAfterMs: null };
      const file = recordFile(input.saga, input.interaction.id);
      const { id, kind, prompt } = input.interaction;
      const record = (await readRecord(file)) ?? {
        interaction: { id, kind, prompt },
        slack: {},
        webhook: [],
      };
      const key = String(input.reminder);
      if (cfg.slack && !record.slack[key]) {
        record.slack[key] = await postSlackMessage(cfg.slack, notificationMessage(input));
        await writeRecord(file, record);
      }
      if (cfg.webhook && !record.webhook.includes(input.reminder)) {
        const { saga, interaction, uiUrl } = input;
        await postWebhookNotification(cfg.webhook, { saga, interaction, uiUrl }, nowSeconds());
        record.webhook.push(input.reminder);
        await writeRecord(file, record);
      }
      return { remindAfterMs: cfg.remindAfterMs, maxReminders: cfg.maxReminders };
    },

    /** Tells chat that the saga failed and why; idempotent per run like notifyInteraction. */
    async notifyFailure(input: NotifyFailureInput): Promise<{ sent: boolean }> {
      const recordId = `failed-${input.runId.toLowerCase().replace(/[^a-z0-9-]/g, '')}`;
      return sendNotice(input.saga, recordId, failureNotice(input), failureSlackMessage(input), input.uiUrl);
    },

    /** A one-off notice that asks nothing (the saga budget's 80 % warning); idempotent per `id`. */
    async notifyNotice(input: NotifyNoticeInput): Promise<{ sent: boolean }> {
      const notice = { id: input.id, kind: input.kind, prompt: input.prompt, options: [], recommended: null };
      return sendNotice(input.saga, input.id, notice, noticeSlackMessage(input.prompt), input.uiUrl ?? '');
    },

    /** Rewrites every Slack message of the interaction (first notification and reminders); chat.update is idempotent. */
    async notifyAnswered(input: NotifyAnsweredInput): Promise<{ updated: number }> {
      const cfg = loadConfig();
      if (!cfg.slack) return { updated: 0 };
      const record = await readRecord(recordFile(input.saga, input.interactionId));
      if (!record) return { updated: 0 };
      const message = answeredMessage({ ...input, interaction: record.interaction });
      const refs = Object.values(record.slack);
      for (const ref of refs) await updateSlackMessage(cfg.slack, ref, message);
      log.info('Chat messages updated with the answer', {
        saga: input.saga,
        interaction: input.interactionId,
      });
      return { updated: refs.length };
    },
  };
}
