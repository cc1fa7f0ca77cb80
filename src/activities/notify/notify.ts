/**
 * Chat notifications of a saga worker: when the saga starts waiting (and on each reminder) post to Slack
 * and/or SAGA_NOTIFY_URL (signed with SAGA_NOTIFY_SECRET); when it is answered, update the Slack messages to
 * show who answered what. Idempotent per interaction: a record (records.ts) remembers what was sent,
 * so a retried activity never posts twice. Configuration comes from the worker's environment.
 */
import { ApplicationFailure, log } from '@temporalio/activity';
import { ChatConfigError, loadNotifyConfig, type NotifyConfig } from '../../chat/config';
import {
  answeredMessage,
  failureMessage,
  noticeMessage,
  notificationMessage,
  type NotifiedInteraction,
  type SlackMessage,
} from '../../chat/messages';
import {
  postSlackMessage,
  postWebhookNotification,
  updateSlackMessage,
  type WebhookNotification,
} from '../../chat/outbound';
import { nowSeconds } from '../../chat/signing';
import { NotifyRecords, type NotifyRecord } from './records';

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

/** The interaction-shaped body a failure is announced with (the webhook's body; no options to answer). */
export const failureNotice = (input: NotifyFailureInput): NotifiedInteraction => ({
  id: 'saga-failed',
  kind: 'failure',
  prompt: `Saga ${input.saga} failed: ${input.reason}`,
  options: [],
  recommended: null,
});

interface Notifier {
  records: NotifyRecords;
  /** The worker's chat configuration, read once; a bad one fails the activity for good. */
  config: () => NotifyConfig;
}

function configLoader(env: NodeJS.ProcessEnv): () => NotifyConfig {
  let config: NotifyConfig | undefined;
  return () => {
    try {
      config ??= loadNotifyConfig(env);
      return config;
    } catch (error) {
      if (error instanceof ChatConfigError)
        throw ApplicationFailure.nonRetryable(error.message, 'ChatConfigError');
      throw error;
    }
  };
}

/** Sends message number `n` (0: the first, n: the n-th reminder) to each destination that has not had it. */
async function deliverOnce(
  notifier: Notifier,
  file: string,
  record: NotifyRecord,
  n: number,
  message: { slack: SlackMessage; webhook: WebhookNotification },
): Promise<void> {
  const cfg = notifier.config();
  if (cfg.slack && !record.slack[String(n)]) {
    record.slack[String(n)] = await postSlackMessage(cfg.slack, message.slack);
    await notifier.records.write(file, record);
  }
  if (cfg.webhook && !record.webhook.includes(n)) {
    await postWebhookNotification(cfg.webhook, message.webhook, nowSeconds());
    record.webhook.push(n);
    await notifier.records.write(file, record);
  }
}

/**
 * Returns how long the saga waits before the first reminder (null: nowhere to notify, so no reminders)
 * and how many reminders it sends at most.
 */
async function notifyInteraction(
  notifier: Notifier,
  input: NotifyInteractionInput,
): Promise<{ remindAfterMs: number | null; maxReminders?: number }> {
  const cfg = notifier.config();
  if (!cfg.slack && !cfg.webhook) return { remindAfterMs: null };
  const file = notifier.records.file(input.saga, input.interaction.id);
  const record = await notifier.records.readOrNew(file, input.interaction);
  const { saga, interaction, uiUrl } = input;
  await deliverOnce(notifier, file, record, input.reminder, {
    slack: notificationMessage(input),
    webhook: { saga, interaction, uiUrl },
  });
  return { remindAfterMs: cfg.remindAfterMs, maxReminders: cfg.maxReminders };
}

/** Posts a notice once to each configured destination (a record remembers what was sent). */
async function sendNotice(
  notifier: Notifier,
  saga: string,
  recordId: string,
  notice: NotifiedInteraction,
  message: { slack: SlackMessage; uiUrl: string },
): Promise<{ sent: boolean }> {
  const cfg = notifier.config();
  if (!cfg.slack && !cfg.webhook) return { sent: false };
  const file = notifier.records.file(saga, recordId);
  const record = await notifier.records.readOrNew(file, notice);
  await deliverOnce(notifier, file, record, 0, {
    slack: message.slack,
    webhook: { saga, interaction: notice, uiUrl: message.uiUrl },
  });
  return { sent: true };
}

/** Rewrites every Slack message of the interaction (first notification and reminders); chat.update is idempotent. */
async function notifyAnswered(notifier: Notifier, input: NotifyAnsweredInput): Promise<{ updated: number }> {
  const cfg = notifier.config();
  if (!cfg.slack) return { updated: 0 };
  const record = await notifier.records.read(notifier.records.file(input.saga, input.interactionId));
  if (!record) return { updated: 0 };
  const message = answeredMessage({ ...input, interaction: record.interaction });
  const refs = Object.values(record.slack);
  for (const ref of refs) await updateSlackMessage(cfg.slack, ref, message);
  log.info('Chat messages updated with the answer', { saga: input.saga, interaction: input.interactionId });
  return { updated: refs.length };
}

export function createNotifyActivities(deps: { sagaHome: string; env?: NodeJS.ProcessEnv }) {
  const notifier: Notifier = {
    records: new NotifyRecords(deps.sagaHome),
    config: configLoader(deps.env ?? process.env),
  };
  return {
    notifyInteraction: (input: NotifyInteractionInput) => notifyInteraction(notifier, input),

    /** Tells chat that the saga failed and why; idempotent per run like notifyInteraction. */
    async notifyFailure(input: NotifyFailureInput): Promise<{ sent: boolean }> {
      const recordId = `failed-${input.runId.toLowerCase().replace(/[^a-z0-9-]/g, '')}`;
      const notice = failureNotice(input);
      const slack = failureMessage(notice.prompt, input.uiUrl);
      return sendNotice(notifier, input.saga, recordId, notice, { slack, uiUrl: input.uiUrl });
    },

    /** A one-off notice that asks nothing (the saga budget's 80 % warning); idempotent per `id`. */
    async notifyNotice(input: NotifyNoticeInput): Promise<{ sent: boolean }> {
      const notice = { id: input.id, kind: input.kind, prompt: input.prompt, options: [], recommended: null };
      const slack = noticeMessage(input.prompt);
      return sendNotice(notifier, input.saga, input.id, notice, { slack, uiUrl: input.uiUrl ?? '' });
    },

    notifyAnswered: (input: NotifyAnsweredInput) => notifyAnswered(notifier, input),
  };
}
