/**
 * `saga board`'s server: the page, its API and its live events on one port, bound to 127.0.0.1
 * unless told otherwise, on the CLI's Temporal client. One watcher serves every open page.
 */
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Client } from '@temporalio/client';
import { UserError } from '../errors';
import { getStatus } from '../saga-client';
import { boardHosts, boardOrigins } from './auth';
import { boardApp, type BoardContext } from './routes';
import { readSagaView, sagaSummaries, type ListCache, type SagaView, type UiPlace } from './views';
import { BoardWatcher } from './watcher';

export interface BoardOptions {
  client: Client;
  token: string;
  user: string;
  ui: UiPlace;
  /** `--repo PATH`: repositories the new-saga form offers besides those of the listed sagas. */
  repos?: string[];
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
/** How long the list waits for one saga's status, and a page for its saga's view. */
const LIST_STATUS_MS = 2_000;
const SAGA_VIEW_MS = 10_000;

class ReadTimedOut extends Error {}

/** Temporal calls with a time limit, all of them aborted when the board closes. */
class BoundedReads {
  private readonly open = new Set<AbortController>();
  constructor(private readonly client: Client) {}

  async within<T>(ms: number, read: () => Promise<T>): Promise<T> {
    const controller = new AbortController();
    // One read is many calls under one signal (a saga's status, then each running agent): not a leak.
    setMaxListeners(64, controller.signal);
    this.open.add(controller);
    const timer = setTimeout(() => controller.abort(), ms);
    try {
      return await this.client.withAbortSignal(controller.signal, read);
    } catch (error) {
      throw controller.signal.aborted ? new ReadTimedOut() : error;
    } finally {
      clearTimeout(timer);
      this.open.delete(controller);
    }
  }

  abortAll(): void {
    for (const controller of this.open) controller.abort();
  }
}

export async function startBoardServer(options: BoardOptions): Promise<BoardServer> {
  const { client, ui } = options;
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => undefined);
  const closedViews = new Map<string, { runId: string; view: SagaView }>();
  /** Each watched saga's latest status, fresh for one poll: the list reuses it instead of asking again. */
  const recent = new Map<string, { status: SagaView['status']; at: number }>();
  const pollMs = options.pollMs ?? 500;
  const reads = new BoundedReads(client);
  const listCache: ListCache = {
    kept: new Map(),
    recent: (name) => {
      const hit = recent.get(name);
      return hit && Date.now() - hit.at < pollMs * 2 ? hit.status : undefined;
    },
    // A saga its own topic is reading right now (a page just opened it) is not asked twice at once.
    statusOf: (name) =>
      inflight.get(name) ?? reads.within(LIST_STATUS_MS, () => getStatus(client, name)).catch(() => null),
  };
  const inflight = new Map<string, Promise<SagaView['status'] | null>>();
  const listSagas = () => sagaSummaries(client, listCache);
  const readSaga = async (name: string, read: { first: boolean } = { first: false }) => {
    const reading = readSagaOnce(name, !read.first);
    inflight.set(
      name,
      reading.then(
        (v) => v.status,
        () => null,
      ),
    );
    try {
      return await reading;
    } finally {
      inflight.delete(name);
    }
  };
  const readSagaOnce = async (name: string, withAgents: boolean) => {
    const view = await reads
      .within(SAGA_VIEW_MS, () => readSagaView(client, name, ui, closedViews, { withAgents }))
      .catch((error: Error) => {
        throw error instanceof ReadTimedOut
          ? new UserError(
              `Saga '${name}' did not answer within ${SAGA_VIEW_MS / 1000} s: is a worker for it running?`,
            )
          : error;
      });
    recent.set(name, { status: view.status, at: Date.now() });
    return view;
  };
  const watcher = new BoardWatcher({ list: listSagas, saga: readSaga }, pollMs);
  const ctx: BoardContext = {
    client,
    watcher,
    token: options.token,
    user: options.user,
    ui,
    repos: options.repos ?? [],
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
        // Reads still waiting (a saga nobody answers for) end now, before the CLI closes the connection.
        reads.abortAll();
        server.close(() => resolve());
        // Open event streams would hold close() forever.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
