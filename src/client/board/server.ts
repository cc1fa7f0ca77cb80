/**
 * `saga board`'s server (issue 32): the page, its API and its live events on one port, bound to 127.0.0.1
 * unless told otherwise, on the CLI's Temporal client. One watcher serves every open page.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Client } from '@temporalio/client';
import { boardHosts, boardOrigins } from './auth';
import { boardApp, type BoardContext } from './routes';
import { readSagaView, sagaSummaries, type SagaSummary, type SagaView, type UiPlace } from './views';
import { BoardWatcher } from './watcher';

export interface BoardOptions {
  client: Client;
  token: string;
  user: string;
  ui: UiPlace;
  host?: string;
  /** 0: any free port. */
  port?: number;
  /** How often a watched saga (or the list) is read while anyone watches. */
  pollMs?: number;
  log?: (line: string) => void;
}

export interface BoardServer {
  url: string;
  port: number;
  watcher: BoardWatcher;
  close(): Promise<void>;
}

export const DEFAULT_BOARD_PORT = 8234;

export async function startBoardServer(options: BoardOptions): Promise<BoardServer> {
  const { client, ui } = options;
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => undefined);
  const closedCache = new Map<string, { key: string; summary: SagaSummary }>();
  const closedViews = new Map<string, { runId: string; view: SagaView }>();
  const listSagas = () => sagaSummaries(client, closedCache);
  const readSaga = (name: string) => readSagaView(client, name, ui, closedViews);
  const watcher = new BoardWatcher({ list: listSagas, saga: readSaga }, options.pollMs);
  const ctx: BoardContext = {
    client,
    watcher,
    token: options.token,
    user: options.user,
    ui,
    hosts: [],
    origins: [],
    listSagas,
    readSaga,
  };
  const app = boardApp(ctx, log);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port ?? DEFAULT_BOARD_PORT, hostname: host }, () =>
      resolve(s),
    );
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  ctx.hosts.push(...boardHosts(host, port));
  ctx.origins.push(...boardOrigins(ctx.hosts));
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    watcher,
    close: () =>
      new Promise<void>((resolve) => {
        watcher.close();
        server.close(() => resolve());
        // Open event streams would hold close() forever.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
