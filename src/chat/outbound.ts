/**
 * Outgoing calls of notifications: Slack's Web API (through @slack/web-api's WebClient, with the bot token)
 * and the generic notification URL (a fetch, signed like the webhook). Errors name the call, never the secrets.
 */
import { ErrorCode, LogLevel, WebClient, type WebAPICallError } from '@slack/web-api';
import type { SlackSendConfig } from './config';
import type { NotifiedInteraction, SlackMessage } from './messages';
import { sign, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signing';

const TIMEOUT_MS = 10_000;

/** One client per configuration (a worker loads its configuration once). */
const clients = new WeakMap<SlackSendConfig, WebClient>();

function slackClient(config: SlackSendConfig): WebClient {
  let client = clients.get(config);
  if (!client) {
    client = new WebClient(config.botToken, {
      slackApiUrl: config.apiUrl,
      timeout: TIMEOUT_MS,
      // The activity's retry policy retries; a rate-limited call fails the attempt instead of waiting in it.
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logLevel: LogLevel.ERROR,
    });
    clients.set(config, client);
  }
  return client;
}

/** Slack's refusal (`ok: false`) or HTTP status as `Slack METHOD failed: HTTP 200 channel_not_found`. */
async function slackCall<T>(method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const coded = error as WebAPICallError;
    if (coded.code === ErrorCode.PlatformError)
      throw new Error(`Slack ${method} failed: HTTP 200 ${coded.data.error}`.trim());
    if (coded.code === ErrorCode.HTTPError)
      throw new Error(`Slack ${method} failed: HTTP ${coded.statusCode}`);
    throw error;
  }
}

export async function postSlackMessage(
  config: SlackSendConfig,
  message: SlackMessage,
): Promise<{ channel: string; ts: string }> {
  const body = await slackCall('chat.postMessage', () =>
    // No previews: a link in agent text would otherwise be fetched by Slack and shown as its page.
    slackClient(config).chat.postMessage({
      channel: config.channel,
      ...message,
      unfurl_links: false,
      unfurl_media: false,
    }),
  );
  if (typeof body.ts !== 'string' || typeof body.channel !== 'string')
    throw new Error('Slack chat.postMessage answered without channel and ts');
  return { channel: body.channel, ts: body.ts };
}

export async function updateSlackMessage(
  config: SlackSendConfig,
  ref: { channel: string; ts: string },
  message: SlackMessage,
): Promise<void> {
  await slackCall('chat.update', () =>
    slackClient(config).chat.update({ channel: ref.channel, ts: ref.ts, ...message }),
  );
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
