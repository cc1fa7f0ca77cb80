import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, openSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makePrivateDirSync } from '../activities/artifacts/file-io';
import { devServerUiPort } from '../domain/contract/naming';
import { devServerSearchAttributeArgs } from '../domain/contract/search-attributes';
import { EnvironmentError } from './errors';
import { findTemporalBinary } from './temporal-binary';

/** Queries the server holds per workflow while its workflow task runs (deploy/dynamicconfig/docker.yaml too). */
export const MAX_BUFFERED_QUERIES = 10;

export interface DevServerOptions {
  /** SQLite file: sagas survive restarts of the server. */
  dbFile: string;
  port?: number;
  /** Web UI port; omit with `headless`. */
  uiPort?: number;
  headless?: boolean;
  namespace?: string;
  ip?: string;
  /** Server output goes here (not to the user's terminal). */
  logFile?: string;
  binary?: string;
  /** How long to wait for the server to answer health checks. */
  startTimeoutMs?: number;
  /** The Web UI decodes payloads through this codec endpoint (`saga codec serve`). */
  uiCodecEndpoint?: string;
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function healthy(binary: string, address: string, namespace: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      binary,
      ['operator', 'namespace', 'describe', '--address', address, '--namespace', namespace],
      { timeout: 5_000 },
      (error) => resolve(!error),
    );
  });
}

/** Polls until the server answers for the namespace (the SDK's own 5 s wait is too short on 2 loaded cores). */
export async function waitForServer(
  address: string,
  {
    binary = findTemporalBinary(),
    namespace = 'default',
    timeoutMs = 60_000,
    isAlive = (): boolean => true,
  }: { binary?: string; namespace?: string; timeoutMs?: number; isAlive?: () => boolean } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive())
      throw new EnvironmentError(`The Temporal dev server exited before it answered at ${address}.`);
    if (await healthy(binary, address, namespace)) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new EnvironmentError(`The Temporal dev server did not answer at ${address} within ${timeoutMs} ms.`);
}

/** The UI comes up after the server answers; a UI port taken meanwhile ends the server. */
async function waitForUi(uiUrl: string, isAlive: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive())
      throw new EnvironmentError(`The Temporal dev server exited before it answered at ${uiUrl}.`);
    const answered = await fetch(uiUrl, { signal: AbortSignal.timeout(2_000) }).then(
      () => true,
      () => false,
    );
    if (answered) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new EnvironmentError(`The Temporal Web UI did not answer at ${uiUrl} within ${timeoutMs} ms.`);
}

/** Starts `temporal server start-dev` with persistence and the saga search attributes registered. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const binary = options.binary ?? findTemporalBinary();
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? 7233;
  const namespace = options.namespace ?? 'default';
  // The CLI picks a free port for its HTTP API itself, after our gRPC port was checked free but before the
  // server binds it, so it can pick the very same port (seen once: "bind: address already in use").
  let httpPort = await freePort();
  while (httpPort === port) httpPort = await freePort();
  // The database holds every saga's history (prompts, answers, plans): its folder is its owner's only, and
  // its files are made 0600 once the server made them (it sets a database up only when the file is new).
  makePrivateDirSync(path.dirname(options.dbFile));
  const args = devServerArgs(options, { ip, port, httpPort, namespace });
  const { child, exited, stop } = spawnDevServer(binary, args, options.logFile);
  const address = `${ip}:${port}`;
  const uiUrl = options.headless ? null : `http://${ip}:${options.uiPort ?? devServerUiPort(port)}`;
  try {
    await waitForServer(address, {
      binary,
      namespace,
      timeoutMs: options.startTimeoutMs ?? 60_000,
      isAlive: () => !exited(),
    });
    if (uiUrl) await waitForUi(uiUrl, () => !exited());
    makeDatabasePrivate(options.dbFile);
  } catch (error) {
    await stop();
    throw error;
  }
  return { address, uiUrl, process: child, stop };
}

/**
 * The frontend's HTTP API answers only requests whose Host header matches this list, and the empty list
 * matches none a browser sends: the CLI cannot turn the API off (port 0 means "pick one"), and without this
 * a web page the user visits could start and signal workflows with a cross-site `text/plain` POST (no
 * preflight). Saga's clients and the Web UI speak gRPC.
 */
export const HTTP_API_OFF = 'frontend.httpAllowedHosts=[]';

/** The database file and its SQLite journal files (`-wal`, `-shm`, `-journal`): 0600. */
function makeDatabasePrivate(dbFile: string): void {
  const name = path.basename(dbFile);
  for (const file of readdirSync(path.dirname(dbFile)))
    if (file === name || file.startsWith(`${name}-`)) chmodSync(path.join(path.dirname(dbFile), file), 0o600);
}

/** The `temporal server start-dev` command line. */
function devServerArgs(
  options: DevServerOptions,
  at: { ip: string; port: number; httpPort: number; namespace: string },
): string[] {
  return [
    'server',
    'start-dev',
    '--db-filename',
    options.dbFile,
    '--ip',
    at.ip,
    '--port',
    String(at.port),
    '--http-port',
    String(at.httpPort),
    '--namespace',
    at.namespace,
    '--log-level',
    'error',
    ...devServerSearchAttributeArgs(),
    // A write-ahead log: one fsync per commit instead of the rollback journal's several, equally durable.
    ...['journal_mode=wal', 'synchronous=full'].flatMap((pragma) => ['--sqlite-pragma', pragma]),
    // One partition per task queue: with the default four, a task that lands on a partition with no poller
    // waiting is stored and forwarded instead of handed over; one host's pollers gain nothing from four.
    // More than one query held per saga while its workflow task runs (the default is one; the next is
    // refused and the client backs off): the PROGRESS.md projector, `saga status` and chat ask at once.
    ...[
      'matching.numTaskqueueReadPartitions=1',
      'matching.numTaskqueueWritePartitions=1',
      `history.MaxBufferedQueryCount=${MAX_BUFFERED_QUERIES}`,
      HTTP_API_OFF,
    ].flatMap((value) => ['--dynamic-config-value', value]),
    ...(options.headless ? ['--headless'] : options.uiPort ? ['--ui-port', String(options.uiPort)] : []),
    ...(options.uiCodecEndpoint && !options.headless ? ['--ui-codec-endpoint', options.uiCodecEndpoint] : []),
  ];
}

/**
 * The server in its own process group (so `stop` ends it and whatever it started): SIGTERM, then SIGKILL
 * after 10 s.
 */
function spawnDevServer(binary: string, args: string[], logFile: string | undefined) {
  const logFd = logFile ? openSync(logFile, 'a', 0o600) : 'ignore';
  const child = spawn(binary, args, { stdio: ['ignore', logFd, logFd], detached: true });
  if (typeof logFd === 'number') closeSync(logFd);
  let exited = false;
  const exitedPromise = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    if (exited) return;
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      return;
    }
    const killer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 10_000);
    await exitedPromise;
    clearTimeout(killer);
  };
  return { child, exited: () => exited, stop };
}

/**
 * Starts a dev server on ports picked free just before, trying again on new ones when it exits before it
 * answers: a port found free can be taken by another process (or by the server's own internal services,
 * which pick theirs at random) before the server binds it. For tests and benchmarks running side by side.
 */
export async function startDevServerOnFreePorts(
  options: Omit<DevServerOptions, 'port' | 'uiPort'>,
  attempts = 3,
): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let uiPort = options.headless ? undefined : await freePort();
    while (uiPort === port) uiPort = await freePort();
    try {
      return await startDevServer({ ...options, port, uiPort });
    } catch (error) {
      const exitedEarly = error instanceof EnvironmentError && /exited before/.test(error.message);
      if (!exitedEarly || attempt >= attempts) throw error;
    }
  }
}
