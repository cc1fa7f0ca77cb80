/**
 * The chat bridge's HTTP server: reads each request body under a 64 KiB limit (1 MiB for forge webhooks;
 * 413 beyond it, before any parsing), routes `POST /hooks/respond`, `POST /slack/events` and
 * `POST /webhooks/forge`, and logs one line per request with its
 * status — never headers or bodies, which carry signatures and user text. A client gets
 * `limits.requestTimeoutMs` to send its headers and body, and at most `limits.maxConnections` connections are
 * open at once (more are dropped on accept), so slow or many clients cannot exhaust the bridge.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { BridgeConfig } from '../../chat/config';
import type { BridgeRequest, BridgeResponse } from './http-types';
import { ReplayCache } from '../../chat/replay-cache';
import { nowSeconds } from '../../chat/signing';
import { createSlackHandler } from './slack';
import { readBody } from '../../http/read-body';
import { handleWebhook } from './webhook';
import {
  FORGE_WEBHOOK_MAX_BYTES,
  FORGE_WEBHOOK_PATH,
  handleForgeWebhook,
  ShaBranches,
} from './forge-webhook';

export const MAX_BODY_BYTES = 64 * 1024;
/** Idle keep-alive connections are closed after this, so they do not hold slots of the connection cap. */
const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export interface ChatBridge {
  port: number;
  url: string;
  close(): Promise<void>;
}

type Handler = (req: BridgeRequest) => Promise<BridgeResponse>;
/** An endpoint and the largest body it reads. */
interface Route {
  handle: Handler;
  maxBytes: number;
}

export interface ChatBridgeOptions {
  client: Client;
  config: BridgeConfig;
  host?: string;
  log?: (line: string) => void;
}

export async function startChatBridge(options: ChatBridgeOptions): Promise<ChatBridge> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const routes = bridgeRoutes(options.client, config, log);
  const { requestTimeoutMs, maxConnections } = config.limits;
  const serverOptions: http.ServerOptions = {
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    keepAliveTimeout: Math.min(KEEP_ALIVE_TIMEOUT_MS, requestTimeoutMs),
    // Node checks the two timeouts above only this often (30 s by default).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(requestTimeoutMs / 4))),
  };
  const server = http.createServer(serverOptions, (req, res) => route(req, res, routes, log));
  server.maxConnections = maxConnections;
  server.on('drop', () => log(`connection dropped: ${maxConnections} already open`));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, options.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The endpoints of the configured channels: the generic webhook, the Slack app and forge webhooks. */
function bridgeRoutes(client: Client, config: BridgeConfig, log: (line: string) => void): Map<string, Route> {
  const routes = new Map<string, Route>();
  const set = (path: string, handle: Handler, maxBytes = MAX_BODY_BYTES) =>
    routes.set(path, { handle, maxBytes });
  // One cache for both endpoints; keys carry the endpoint.
  const replays = new ReplayCache();
  if (config.webhook) {
    const callers = config.webhook;
    set('/hooks/respond', (req) =>
      handleWebhook(req, {
        client,
        approvers: config.approvers,
        callers,
        replays,
        nowSeconds: nowSeconds(),
      }),
    );
  }
  if (config.slack) {
    const slack = createSlackHandler({ client, approvers: config.approvers, ...config.slack, replays, log });
    set('/slack/events', (req) => slack(req, nowSeconds()));
  }
  set(FORGE_WEBHOOK_PATH, forgeRoute(client, config, replays, log), FORGE_WEBHOOK_MAX_BYTES);
  return routes;
}

/** Without SAGA_FORGE_WEBHOOK_SECRET the endpoint refuses everything: an unsigned forge event is never read. */
function forgeRoute(
  client: Client,
  config: BridgeConfig,
  replays: ReplayCache,
  log: (line: string) => void,
): Handler {
  const secret = config.forgeWebhookSecret;
  if (!secret)
    return async () => ({
      status: 501,
      body: { ok: false, error: 'Forge webhooks are off: SAGA_FORGE_WEBHOOK_SECRET is not set.' },
    });
  const shas = new ShaBranches();
  return (req) => handleForgeWebhook(req, { client, secret, shas, replays, log });
}

function route(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  routes: Map<string, Route>,
  log: (line: string) => void,
): void {
  const path = (req.url ?? '/').split('?')[0]!;
  const send = (response: BridgeResponse, extraHeaders: Record<string, string> = {}) => {
    const text = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
    const type = typeof response.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    res.writeHead(response.status, { 'content-type': type, ...extraHeaders }).end(text);
    log(`${req.method} ${path} → ${response.status}`);
  };
  if (req.method === 'GET' && path === '/healthz') return send({ status: 200, body: { ok: true } });
  const handler = routes.get(path);
  if (!handler) return send({ status: 404, body: { ok: false, error: `No endpoint ${path} here.` } });
  if (req.method !== 'POST') return send({ status: 405, body: { ok: false, error: 'Use POST.' } });

  readBody(req, handler.maxBytes).then(
    async (body) => {
      if (body === null) {
        send(
          { status: 413, body: { ok: false, error: `Body over ${handler.maxBytes} bytes.` } },
          { connection: 'close' },
        );
        return;
      }
      try {
        send(await handler.handle({ rawBody: body, headers: req.headers }));
      } catch (error) {
        log(`${req.method} ${path}: ${(error as Error).message}`);
        send({ status: 500, body: { ok: false, error: 'Internal error; nothing was changed.' } });
      }
    },
    () => req.destroy(),
  );
}
