/** `saga dev` (embedded dev server + worker) and `saga worker` (worker only). */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { makePrivateDirSync } from '../../activities/artifacts/file-io';
import { devServerUiPort } from '../../domain/contract/naming';
import { codecFromEnv, CODEC_ENV, dataConverterFromEnv } from '../../codec/config';
import { codecSecretFrom, startCodecServer, uiOrigins, type CodecServer } from '../../codec/server';
import { connectClient, connectionSettings, sagaClientInterceptors, uiUrlFor } from '../connection';
import { EnvironmentError, UserError } from '../errors';
import { bool, packageVersion, port, str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { startDevServer, waitForServer, type DevServer } from '../../worker/dev-server';
import { findTemporalBinary } from '../../worker/temporal-binary';
import { defaultHostId, defaultSagaHome, runSagaWorkers } from '../../worker/worker';
import type { BoardServer } from '../board/server';
import type { Io } from '../io';
import { boardSettings, openBoard, type BoardSettings } from './board';

async function serverAnswers(address: string, namespace: string): Promise<boolean> {
  try {
    await waitForServer(address, { namespace, timeoutMs: 1_500 });
    return true;
  } catch {
    return false;
  }
}

/** Starts the embedded dev server unless one already answers at TEMPORAL_ADDRESS. */
export async function ensureDevServer(
  io: Io,
  opts: { sagaHome: string; uiPort?: number; uiCodecEndpoint?: string },
): Promise<{ address: string; namespace: string; uiUrl: string | null; server: DevServer | null }> {
  const settings = connectionSettings();
  const binary = findTemporalBinary();
  if (await serverAnswers(settings.address, settings.namespace)) {
    io.out(`Using the Temporal server already answering at ${settings.address}.`);
    if (opts.uiCodecEndpoint)
      io.out(
        `Its Web UI calls the codec endpoint ${opts.uiCodecEndpoint} only if it was started with --ui-codec-endpoint or has it in its codec server setting (Data Encoder).`,
      );
    return {
      address: settings.address,
      namespace: settings.namespace,
      uiUrl: uiUrlFor(settings.address),
      server: null,
    };
  }
  const [host, portText] = settings.address.split(':');
  if (!['localhost', '127.0.0.1'].includes(host ?? '')) {
    throw new EnvironmentError(
      `No Temporal server answers at ${settings.address}, and it is not local, so saga dev will not start one there.`,
    );
  }
  const port = Number(portText ?? 7233);
  const dataDir = path.join(opts.sagaHome, '.temporal');
  // The saga home and the server's database: their owner's only.
  makePrivateDirSync(opts.sagaHome);
  makePrivateDirSync(dataDir);
  const uiPort = opts.uiPort ?? devServerUiPort(port);
  io.out(
    `Starting the Temporal dev server (${binary}) with its database at ${path.join(dataDir, 'temporal.db')}...`,
  );
  const server = await startDevServer({
    binary,
    dbFile: path.join(dataDir, 'temporal.db'),
    port,
    uiPort,
    namespace: settings.namespace,
    logFile: path.join(dataDir, 'server.log'),
    ...(opts.uiCodecEndpoint ? { uiCodecEndpoint: opts.uiCodecEndpoint } : {}),
  });
  return { address: server.address, namespace: settings.namespace, uiUrl: server.uiUrl, server };
}

export async function devCommand(args: ParsedArgs, io: Io): Promise<number> {
  const sagaHome = defaultSagaHome();
  // Read before anything starts: a bad codec key is reported at once.
  const dataConverter = dataConverterFromEnv();
  const codecPort = port(args, 'codec-port', 'dev');
  const codec = codecPort === undefined ? null : codecFromEnv(process.env, { forViewing: true });
  if (codecPort !== undefined && !codec)
    throw new UserError(
      `saga dev: --codec-port needs a codec key: set ${CODEC_ENV.key} or ${CODEC_ENV.keyFile}.`,
    );
  const boardWanted = bool(args, 'no-board') ? null : boardSettings(args, 'dev', 'board-');
  // The endpoint's secret is its path: the UI takes a URL and sends no header of ours.
  const codecSecret = codec ? codecSecretFrom(undefined) : undefined;
  const uiCodecEndpoint = codec ? `http://127.0.0.1:${codecPort}/${codecSecret}` : undefined;
  const dev = await ensureDevServer(io, {
    sagaHome,
    uiPort: port(args, 'ui-port', 'dev'),
    ...(uiCodecEndpoint ? { uiCodecEndpoint } : {}),
  });
  let codecServer: CodecServer | null = null;
  let connection: NativeConnection | null = null;
  let board: BoardServer | null = null;
  try {
    // After the server: the UI calls the endpoint only when a page shows payloads, and its origin is known now.
    if (codec)
      codecServer = await startCodecServer({
        codec,
        port: codecPort,
        origins: uiOrigins(dev.uiUrl),
        ...(codecSecret ? { secret: codecSecret } : {}),
      });
    connection = await NativeConnection.connect({
      ...connectionSettings().connectionOptions,
      address: dev.address,
    });
    io.out(`Temporal Web UI: ${dev.uiUrl ?? '(not available)'}`);
    if (codecServer) io.out(`Codec endpoint for the Web UI: ${codecServer.url} (key id ${codec!.keyId})`);
    if (boardWanted) board = await devBoard(boardWanted, dev, dataConverter, io);
    io.out(`Worker for host '${defaultHostId()}' running; saga home ${sagaHome}. Press Ctrl-C to stop.`);
    await runSagaWorkers({ connection, namespace: dev.namespace, sagaHome, dataConverter });
  } finally {
    // A worker that failed to start still holds the connection: its own error is the one to report.
    await connection?.close().catch(() => undefined);
    await codecServer?.close();
    await board?.close();
    if (dev.server) {
      io.out('Stopping the Temporal dev server...');
      await dev.server.stop();
    }
  }
  return 0;
}

/** The board beside the dev server; one that cannot start (its port taken, say) is reported, not fatal. */
async function devBoard(
  settings: BoardSettings,
  dev: { address: string; namespace: string; uiUrl: string | null },
  dataConverter: ReturnType<typeof dataConverterFromEnv>,
  io: Io,
): Promise<BoardServer | null> {
  const connection = await Connection.connect({
    address: dev.address,
    interceptors: sagaClientInterceptors(),
  });
  const client = new Client({ connection, namespace: dev.namespace, dataConverter });
  const board = await openBoard(client, settings, dev.uiUrl, io).catch((error: Error) => {
    io.err(`${error.message} (the dev server and worker run without it; --no-board skips it)`);
    return null;
  });
  if (!board) {
    await connection.close();
    return null;
  }
  return {
    ...board,
    close: async () => {
      await board.close();
      await connection.close();
    },
  };
}

export async function workerCommand(args: ParsedArgs, io: Io): Promise<number> {
  const settings = connectionSettings();
  // The sandbox refuses routes to the server this worker uses (domain/config/trust.ts reads it from here),
  // also when a TOML profile, not the environment, names it.
  process.env.TEMPORAL_ADDRESS ||= settings.address;
  const dataConverter = dataConverterFromEnv();
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(settings.connectionOptions);
  } catch (error) {
    throw new EnvironmentError(
      `Cannot reach a Temporal server at ${settings.address} (${(error as Error).message}). ` +
        'Start one with `saga dev`, or set TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY.',
    );
  }
  const hostId = str(args, 'host-id') ?? defaultHostId();
  const deploymentName = str(args, 'deployment') ?? process.env.SAGA_DEPLOYMENT;
  const deployment = deploymentName
    ? { name: deploymentName, buildId: process.env.SAGA_BUILD_ID || packageVersion() }
    : undefined;
  if (!deployment && bool(args, 'make-current'))
    throw new UserError('saga worker: --make-current needs --deployment NAME (or SAGA_DEPLOYMENT).');
  io.out(
    `Saga worker for host '${hostId}' connected to ${settings.address} (namespace ${settings.namespace})` +
      (deployment ? `, build ${deployment.buildId} of deployment '${deployment.name}'.` : '.'),
  );
  try {
    const running = runSagaWorkers({
      connection,
      namespace: settings.namespace,
      sagaHome: defaultSagaHome(),
      hostId,
      dataConverter,
      ...(deployment ? { deployment } : {}),
    });
    if (deployment && bool(args, 'make-current'))
      void makeCurrent(settings, deployment, hostId).then(
        () =>
          io.out(
            `Build ${deployment.buildId} is the current version of '${deployment.name}': new sagas start on it.`,
          ),
        (error: unknown) => io.err(`saga worker: ${(error as Error).message}`),
      );
    await running;
  } finally {
    // A worker that failed to start still holds the connection: its own error is the one to report.
    await connection.close().catch(() => undefined);
  }
  return 0;
}

/**
 * Makes this build the deployment's current version, so new sagas start on it (running ones stay on
 * theirs). The server knows a version from its workers' first poll, so this retries for a minute.
 */
async function makeCurrent(
  settings: ReturnType<typeof connectionSettings>,
  deployment: { name: string; buildId: string },
  hostId: string,
): Promise<void> {
  const { client, connection } = await connectClient(settings);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.workflowService.setWorkerDeploymentCurrentVersion({
          namespace: settings.namespace,
          deploymentName: deployment.name,
          buildId: deployment.buildId,
          identity: `saga worker ${hostId}`,
        });
        return;
      } catch (error) {
        if (attempt >= 60)
          throw new EnvironmentError(
            `could not make build ${deployment.buildId} current in deployment '${deployment.name}': ${(error as Error).message}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  } finally {
    await connection.close();
  }
}
