/**
 * Chat configuration from the environment (README "Chat"). The bridge needs SAGA_APPROVERS and at least one
 * inbound channel; the worker only needs what it takes to send notifications. Secrets are kept out of
 * anything that gets printed (see describeChatConfig). Answers and notifications never share a secret: the
 * receiver of notifications must not be able to sign an answer.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseApprovers, type Approvers } from './allowlist';

const SLACK_API_DEFAULT = 'https://slack.com/api/';
const REMIND_AFTER_DEFAULT_MS = 60 * 60_000;
const REMIND_MAX_DEFAULT = 5;
const MAX_CONNECTIONS_DEFAULT = 64;
const REQUEST_TIMEOUT_DEFAULT_MS = 15_000;

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
  /** `secret` is SAGA_NOTIFY_SECRET, never one that authenticates answers. */
  webhook: { url: string; secret: string } | null;
  remindAfterMs: number;
  /** Reminders per interaction; each waits twice as long as the one before. */
  maxReminders: number;
}

const wholeNumber = (env: NodeJS.ProcessEnv, key: string, fallback: number, min: number, max: number) => {
  const text = optional(env, key);
  const value = text === undefined ? fallback : Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ChatConfigError(`${key} must be a whole number from ${min} to ${max}, got ${text}`);
  return value;
};

/** What the worker's notification activity sends to; nothing configured means notifications are off. */
export function loadNotifyConfig(env: NodeJS.ProcessEnv): NotifyConfig {
  const botToken = optional(env, 'SLACK_BOT_TOKEN');
  const channel = optional(env, 'SLACK_CHANNEL');
  const notifyUrl = optional(env, 'SAGA_NOTIFY_URL');
  const secret = optional(env, 'SAGA_NOTIFY_SECRET');
  if (notifyUrl && !z.string().url().safeParse(notifyUrl).success)
    throw new ChatConfigError(`SAGA_NOTIFY_URL is not a URL: ${notifyUrl}`);
  if (notifyUrl && !secret)
    throw new ChatConfigError(
      'SAGA_NOTIFY_URL is set but SAGA_NOTIFY_SECRET is not: notifications are signed with their own secret ' +
        '(not SAGA_WEBHOOK_SECRET, so the receiver cannot sign answers).',
    );
  if (secret) requireDistinctNotifySecret(secret, answerSecrets(env));
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
    maxReminders: wholeNumber(env, 'SAGA_REMIND_MAX', REMIND_MAX_DEFAULT, 0, 20),
  };
}

/**
 * Who may call the webhook. A request names its caller in X-Saga-Caller and is verified with that caller's
 * secret; the caller answers only as itself (its id is the user SAGA_APPROVERS checks). A request without
 * the header is the `shared` caller: SAGA_WEBHOOK_SECRET, answering only as SAGA_WEBHOOK_USER.
 */
export interface WebhookCallers {
  byId: ReadonlyMap<string, string>;
  shared: { secret: string; user: string } | null;
}

/** `CALLER:SECRET` entries separated by commas or line breaks (`#` starts a comment line in the file). */
function parseCallers(text: string, source: string, into: Map<string, string>): void {
  for (const raw of text.split(/[,\n]/)) {
    const entry = raw.trim();
    if (!entry || entry.startsWith('#')) continue;
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const secret = colon < 0 ? '' : entry.slice(colon + 1).trim();
    // Never echo the entry: its secret part would end up in logs.
    if (!id || !secret || /\s/.test(id))
      throw new ChatConfigError(
        `${source}: an entry${id ? ` for '${id}'` : ''} is not CALLER:SECRET (caller ids have no spaces).`,
      );
    if (into.has(id)) throw new ChatConfigError(`${source}: caller '${id}' is listed twice.`);
    into.set(id, secret);
  }
}

/** The per-caller keys of SAGA_WEBHOOK_CALLERS and SAGA_WEBHOOK_CALLERS_FILE. */
function loadCallerKeys(env: NodeJS.ProcessEnv): Map<string, string> {
  const byId = new Map<string, string>();
  const listed = optional(env, 'SAGA_WEBHOOK_CALLERS');
  if (listed) parseCallers(listed, 'SAGA_WEBHOOK_CALLERS', byId);
  const file = optional(env, 'SAGA_WEBHOOK_CALLERS_FILE');
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ChatConfigError(
        `SAGA_WEBHOOK_CALLERS_FILE ${file} cannot be read: ${(error as NodeJS.ErrnoException).code}`,
      );
    }
    parseCallers(text, `SAGA_WEBHOOK_CALLERS_FILE ${file}`, byId);
  }
  return byId;
}

function loadCallers(env: NodeJS.ProcessEnv): WebhookCallers | null {
  const byId = loadCallerKeys(env);
  const sharedSecret = optional(env, 'SAGA_WEBHOOK_SECRET');
  const sharedUser = optional(env, 'SAGA_WEBHOOK_USER');
  if (sharedSecret && !sharedUser)
    throw new ChatConfigError(
      'SAGA_WEBHOOK_SECRET is set without SAGA_WEBHOOK_USER: a shared secret answers as one user only. ' +
        'Set SAGA_WEBHOOK_USER to that approver id, or give each caller its own key in SAGA_WEBHOOK_CALLERS ' +
        '("alice:SECRET,bob:SECRET").',
    );
  if (sharedUser && !sharedSecret)
    throw new ChatConfigError('SAGA_WEBHOOK_USER is set without SAGA_WEBHOOK_SECRET.');
  const owners = new Map<string, string>();
  const secrets: [string, string][] = [...byId];
  if (sharedSecret) secrets.push(['SAGA_WEBHOOK_SECRET', sharedSecret]);
  for (const [id, secret] of secrets) {
    const other = owners.get(secret);
    // One caller could otherwise sign as the other.
    if (other) throw new ChatConfigError(`Webhook callers '${other}' and '${id}' share a secret.`);
    owners.set(secret, id);
  }
  if (byId.size === 0 && !sharedSecret) return null;
  return { byId, shared: sharedSecret && sharedUser ? { secret: sharedSecret, user: sharedUser } : null };
}

/** Every secret that authenticates an inbound request in this environment. */
function answerSecrets(env: NodeJS.ProcessEnv): string[] {
  return [
    ...loadCallerKeys(env).values(),
    optional(env, 'SAGA_WEBHOOK_SECRET'),
    optional(env, 'SLACK_SIGNING_SECRET'),
  ].filter((secret): secret is string => secret !== undefined);
}

function requireDistinctNotifySecret(notifySecret: string, answers: string[]): void {
  if (answers.includes(notifySecret))
    throw new ChatConfigError(
      'SAGA_NOTIFY_SECRET must differ from every secret that authenticates answers (SAGA_WEBHOOK_SECRET, ' +
        'SAGA_WEBHOOK_CALLERS, SLACK_SIGNING_SECRET): whoever receives notifications could otherwise sign answers.',
    );
}

export interface BridgeConfig {
  port: number;
  approvers: Approvers;
  slack: { signingSecret: string; botToken: string | null; apiUrl: string } | null;
  webhook: WebhookCallers | null;
  /** SAGA_FORGE_WEBHOOK_SECRET: `POST /webhooks/forge` verifies forge webhooks with it; null → that endpoint is off. */
  forgeWebhookSecret: string | null;
  /** Both the headers and the body must arrive within `requestTimeoutMs`. */
  limits: { maxConnections: number; requestTimeoutMs: number };
}

export function loadBridgeConfig(env: NodeJS.ProcessEnv): BridgeConfig {
  const approversText = optional(env, 'SAGA_APPROVERS');
  const signingSecret = optional(env, 'SLACK_SIGNING_SECRET');
  const callers = loadCallers(env);
  const forgeWebhookSecret = optional(env, 'SAGA_FORGE_WEBHOOK_SECRET') ?? null;
  const answersServed = Boolean(signingSecret || callers);
  // Forge webhooks answer nothing, so a bridge serving only them needs no approvers.
  if (!approversText && (answersServed || !forgeWebhookSecret))
    throw new ChatConfigError(
      'SAGA_APPROVERS is required: a comma-separated list of user ids allowed to answer ' +
        '(e.g. "U024BE7LH,alice", or "my-saga=U024BE7LH" for one saga only). Without it the bridge does not start.',
    );
  const portText = optional(env, 'SAGA_CHAT_PORT') ?? '3000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ChatConfigError(`SAGA_CHAT_PORT must be a port number, got ${portText}`);
  if (!answersServed && !forgeWebhookSecret)
    throw new ChatConfigError(
      'Nothing to serve: set SLACK_SIGNING_SECRET (Slack app) and/or SAGA_WEBHOOK_CALLERS or ' +
        'SAGA_WEBHOOK_SECRET with SAGA_WEBHOOK_USER (generic webhook), and/or SAGA_FORGE_WEBHOOK_SECRET ' +
        '(forge webhooks).',
    );
  const notifySecret = optional(env, 'SAGA_NOTIFY_SECRET');
  if (notifySecret) requireDistinctNotifySecret(notifySecret, answerSecrets(env));
  if (forgeWebhookSecret && answerSecrets(env).includes(forgeWebhookSecret))
    throw new ChatConfigError(
      'SAGA_FORGE_WEBHOOK_SECRET must differ from every secret that authenticates answers: whoever can read ' +
        "the forge's hook settings could otherwise sign answers.",
    );
  return {
    port,
    approvers: approversText ? approversFrom(approversText) : NOBODY,
    slack: signingSecret
      ? { signingSecret, botToken: optional(env, 'SLACK_BOT_TOKEN') ?? null, apiUrl: apiUrl(env) }
      : null,
    webhook: callers,
    forgeWebhookSecret,
    limits: {
      maxConnections: wholeNumber(env, 'SAGA_CHAT_MAX_CONNECTIONS', MAX_CONNECTIONS_DEFAULT, 1, 100_000),
      requestTimeoutMs: wholeNumber(
        env,
        'SAGA_CHAT_REQUEST_TIMEOUT_MS',
        REQUEST_TIMEOUT_DEFAULT_MS,
        100,
        600_000,
      ),
    },
  };
}

/** When only forge webhooks are served: nobody answers through this bridge. */
const NOBODY: Approvers = { mayAnswer: () => false, describe: () => 'none (SAGA_APPROVERS is not set)' };

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
    `Webhook: ${config.webhook ? `POST /hooks/respond (${describeCallers(config.webhook)})` : 'off (no SAGA_WEBHOOK_CALLERS or SAGA_WEBHOOK_SECRET)'}`,
    `Forge webhooks: POST /webhooks/forge ${config.forgeWebhookSecret ? '(signed with SAGA_FORGE_WEBHOOK_SECRET)' : 'off: SAGA_FORGE_WEBHOOK_SECRET is not set, so every delivery is refused 501'}`,
    `Limits: ${config.limits.maxConnections} connections, ${config.limits.requestTimeoutMs} ms per request`,
    `Approvers: ${config.approvers.describe()}`,
  ].join('\n');
}

function describeCallers(callers: WebhookCallers): string {
  return [
    callers.byId.size ? `callers ${[...callers.byId.keys()].join(', ')} by X-Saga-Caller` : '',
    callers.shared ? `SAGA_WEBHOOK_SECRET answers as ${callers.shared.user}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
