/**
 * Outgoing calls of notifications: Slack's Web API (JSON POST with the bot token) and the generic
 * notification URL (signed like the webhook). Errors name the call, never the secrets.
 */
import type { SlackSendConfig } from './config';
import type { NotifiedInteraction, SlackMessage } from './messages';
import { sign, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signing';

const TIMEOUT_MS = 10_000;

export async function slackApi(
  config: Pick<SlackSendConfig, 'botToken' | 'apiUrl'>,
  method: string,
  payload: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${config.apiUrl}${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      authorization: `Bearer ${config.botToken}`,
    },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || body.ok !== true) {
    throw new Error(`Slack ${method} failed: HTTP ${response.status} ${String(body.error ?? '')}`.trim());
  }
  return body;
}

export async function postSlackMessage(
  config: SlackSendConfig,
  message: SlackMessage,
): Promise<{ channel: string; ts: string }> {
  const body = await slackApi(config, 'chat.postMessage', { channel: config.channel, ...message });
  if (typeof body.ts !== 'string' || typeof body.channel !== 'string')
    throw new Error('Slack chat.postMessage answered without channel and ts');
  return { channel: body.channel, ts: body.ts };
}

export async function updateSlackMessage(
  config: SlackSendConfig,
  ref: { channel: string; ts: string },
  message: SlackMessage,
): Promise<void> {
  await slackApi(config, 'chat.update', { channel: ref.channel, ts: ref.ts, ...message });
}

export interface WebhookNotification {
  saga: string;
  interaction: NotifiedInteraction;
  uiUrl: string;
}

export async function postWebhookNotification(
  target: { url: string; secret: string },
  notification: WebhookNotification,
  nowSeconds: number,
): Promise<void> {
  const body = JSON.stringify(notification);
  const timestamp = String(nowSeconds);
  const response = await fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
      [WEBHOOK_SIGNATURE_HEADER]: sign('v1', target.secret, timestamp, body),
    },
    body,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`Notification to SAGA_NOTIFY_URL failed: HTTP ${response.status}`);
}
