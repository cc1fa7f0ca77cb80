import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type GrpcRetryOptions,
} from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { dataConverterFromEnv } from '../codec/config';
import { devServerUiPort } from '../domain/contract/naming';
import { EnvironmentError } from './errors';

export interface ConnectionSettings {
  address: string;
  namespace: string;
  connectionOptions: ReturnType<typeof loadClientConnectConfig>['connectionOptions'];
}

/**
 * Temporal's own conventions: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*,
 * TEMPORAL_PROFILE and the TOML profile file. Defaults to the local dev server.
 */
export function connectionSettings(): ConnectionSettings {
  const config = loadClientConnectConfig();
  const address = config.connectionOptions.address ?? 'localhost:7233';
  return {
    address,
    namespace: config.namespace ?? 'default',
    connectionOptions: { ...config.connectionOptions, address },
  };
}

/** gRPC RESOURCE_EXHAUSTED. */
const RESOURCE_EXHAUSTED = 8;

/**
 * A query that reaches the server while the saga's workflow task is in flight is held until the task is done;
 * the server holds one per workflow by default (`history.MaxBufferedQueryCount`) and refuses the next as
 * RESOURCE_EXHAUSTED, "consistent query buffer is full". The SDK backs off 1 s or more from that, as from an
 * overloaded server, but the buffer clears when the task completes, tens of ms later: a `saga status` right
 * after an answer (while the PROGRESS.md projector's query waited) took 1.5-2 s. So those are retried sooner.
 */
export const SAGA_CLIENT_RETRY: GrpcRetryOptions = (() => {
  const standard = defaultGrpcRetryOptions();
  return {
    retryableDecider: standard.retryableDecider,
    delayFunction: (attempt, status) =>
      status.code === RESOURCE_EXHAUSTED && /query buffer is full/i.test(status.details)
        ? Math.min(25 * 2 ** attempt, 500)
        : standard.delayFunction(attempt, status),
  };
})();

export const sagaClientInterceptors = () => [makeGrpcRetryInterceptor(SAGA_CLIENT_RETRY)];

export async function connectClient(
  settings = connectionSettings(),
): Promise<{ client: Client; connection: Connection; settings: ConnectionSettings }> {
  // Before connecting: a bad codec key is the error to report, whether or not a server answers.
  const dataConverter = dataConverterFromEnv();
  try {
    const connection = await Connection.connect({
      ...settings.connectionOptions,
      connectTimeout: '5s',
      interceptors: sagaClientInterceptors(),
    } as Parameters<typeof Connection.connect>[0]);
    return {
      client: new Client({ connection, namespace: settings.namespace, dataConverter }),
      connection,
      settings,
    };
  } catch (error) {
    throw new EnvironmentError(
      `Cannot reach a Temporal server at ${settings.address} (${(error as Error).message}). ` +
        'Start one with `saga dev` (embedded dev server + worker), or set TEMPORAL_ADDRESS to your cluster.',
    );
  }
}

/** The Web UI of the server at `address`: SAGA_UI_URL, else the dev server's (its gRPC port + 1000). */
export function uiUrlFor(address: string): string | null {
  if (process.env.SAGA_UI_URL) return process.env.SAGA_UI_URL;
  const [host, port] = address.split(':');
  if (['localhost', '127.0.0.1'].includes(host ?? ''))
    return `http://${host}:${devServerUiPort(Number(port ?? 7233))}`;
  return null;
}
