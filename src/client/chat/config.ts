/**
 * Chat configuration from the environment (DESIGN.md 4.7). The bridge needs SAGA_APPROVERS and at least one
 * inbound channel; the worker only needs what it takes to send notifications. Secrets are kept out of
 * anything that gets printed (see describeChatConfig).
 */
import { z } from 'zod';
import { parseApprovers, type Approvers } from './allowlist';

const SLACK_API_DEFAULT = 'https://slack.com/api/';
const REMIND_AFTER_DEFAULT_MS = 60 * 60_000;

export class ChatConfigError extends Error {
  override name = 'ChatConfigError';
}

const optional = (env: NodeJS.ProcessEnv, key: string): string | undefined => env[key]?.trim() || undefined;

/** Slack's Web API client appends method names to this base, so it must end with a slash. */
const apiUrl = (env: NodeJS.ProcessEnv): string => {
  const url = optional(env, 'SLACK_API_URL') ?? SLACK_API_DEFAULT;
  if (!z.string().url().safeParse(url).success)
    throw new ChatConfigError(`SLACK_API_URL is not a URL: ${url}`);
  return url.endsWith('/') ? url : `${url}/`;
};

export interface SlackSendConfig {
  botToken: string;
  channel: string;
  apiUrl: string;
}

export interface NotifyConfig {
  slack: SlackSendConfig | null;
  webhook: { url: string; secret: string } | null;
  remindAfterMs: number;
}

/** What the worker's notification activity sends to; nothing configured means notifications are off. */
export function loadNotifyConfig(env: NodeJS.ProcessEnv): NotifyConfig {
  const botToken = optional(env, 'SLACK_BOT_TOKEN');
  const channel = optional(env, 'SLACK_CHANNEL');
  const notifyUrl = optional(env, 'SAGA_NOTIFY_URL');
  const secret = optional(env, 'SAGA_WEBHOOK_SECRET');
  if (notifyUrl && !z.string().url().safeParse(notifyUrl).success)
    throw new ChatConfigError(`SAGA_NOTIFY_URL is not a URL: ${notifyUrl}`);
  if (notifyUrl && !secret)
    throw new ChatConfigError(
      'SAGA_NOTIFY_URL is set but SAGA_WEBHOOK_SECRET is not: notifications are signed.',
    );
  const remindText = optional(env, 'SAGA_REMIND_AFTER_MS');
  const remindAfterMs = remindText === undefined ? REMIND_AFTER_DEFAULT_MS : Number(remindText);
  if (!Number.isInteger(remindAfterMs) || remindAfterMs < 1000)
    throw new ChatConfigError(
      `SAGA_REMIND_AFTER_MS must be a whole number of milliseconds >= 1000, got ${remindText}`,
    );
  return {
    slack: botToken && channel ? { botToken, channel, apiUrl: apiUrl(env) } : null,
    webhook: notifyUrl && secret ? { url: notifyUrl, secret } : null,
    remindAfterMs,
  };
}

export interface BridgeConfig {
  port: number;
  approvers: Approvers;
  slack: { signingSecret: string; botToken: string | null; apiUrl: string } | null;
  webhook: { secret: string } | null;
}

export function loadBridgeConfig(env: NodeJS.ProcessEnv): BridgeConfig {
  const approversText = optional(env, 'SAGA_APPROVERS');
  if (!approversText)
    throw new ChatConfigError(
      'SAGA_APPROVERS is required: a comma-separated list of user ids allowed to answer ' +
        '(e.g. "U024BE7LH,alice", or "my-saga=U024BE7LH" for one saga only). Without it the bridge does not start.',
    );
  const portText = optional(env, 'SAGA_CHAT_PORT') ?? '3000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ChatConfigError(`SAGA_CHAT_PORT must be a port number, got ${portText}`);
  const signingSecret = optional(env, 'SLACK_SIGNING_SECRET');
  const webhookSecret = optional(env, 'SAGA_WEBHOOK_SECRET');
  if (!signingSecret && !webhookSecret)
    throw new ChatConfigError(
      'Nothing to serve: set SLACK_SIGNING_SECRET (Slack app) and/or SAGA_WEBHOOK_SECRET (generic webhook).',
    );
  return {
    port,
    approvers: approversFrom(approversText),
    slack: signingSecret
      ? { signingSecret, botToken: optional(env, 'SLACK_BOT_TOKEN') ?? null, apiUrl: apiUrl(env) }
      : null,
    webhook: webhookSecret ? { secret: webhookSecret } : null,
  };
}

function approversFrom(text: string): Approvers {
  try {
    return parseApprovers(text);
  } catch (error) {
    throw new ChatConfigError((error as Error).message);
  }
}

/** A printable summary: which parts are on, never the secrets themselves. */
export function describeChatConfig(config: BridgeConfig): string {
  return [
    `Slack: ${config.slack ? `POST /slack/events (Web API ${config.slack.apiUrl}${config.slack.botToken ? '' : ', no SLACK_BOT_TOKEN: button refusals cannot be posted'})` : 'off (no SLACK_SIGNING_SECRET)'}`,
    `Webhook: ${config.webhook ? 'POST /hooks/respond' : 'off (no SAGA_WEBHOOK_SECRET)'}`,
    `Approvers: ${config.approvers.describe()}`,
  ].join('\n');
}
