/**
 * For the forge webhook tests: the run's real Temporal server, a worker running the forge event recorder
 * (test/harness/workflows/forge-event-recorder.ts) on its own queue, and a helper that starts one under a
 * saga's workflow id and reads what it was signalled.
 */
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { sagaWorkflowId } from '../../src/domain/contract/naming';
import type { ForgeEvent } from '../../src/domain/delivery/forge-shapes';
import { quietRuntime } from './saga-env';
import { testServer } from './server';
import { forgeEventRecorder, forgeEventsQuery } from './workflows/forge-event-recorder';

export interface RecorderEnv {
  client: Client;
  /** Starts a recorder as saga `name` (workflow id `saga-<name>`). */
  startSaga(name: string): Promise<void>;
  events(name: string): Promise<ForgeEvent[]>;
  endSaga(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRecorderEnv(label: string): Promise<RecorderEnv> {
  quietRuntime();
  const server = testServer();
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `forge-recorder-${label}-${process.pid}`;
  const worker = await Worker.create({
    connection: native,
    namespace: server.namespace,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('./workflows/forge-event-recorder'),
      logger: new DefaultLogger('WARN'),
    }),
  });
  const running = worker.run();
  const started: string[] = [];
  return {
    client,
    async startSaga(name) {
      await client.workflow.start(forgeEventRecorder, { taskQueue, workflowId: sagaWorkflowId(name) });
      started.push(name);
    },
    events: (name) => client.workflow.getHandle(sagaWorkflowId(name)).query(forgeEventsQuery),
    async endSaga(name) {
      await client.workflow.getHandle(sagaWorkflowId(name)).terminate('test over');
    },
    async close() {
      for (const name of started)
        await client.workflow
          .getHandle(sagaWorkflowId(name))
          .terminate('test over')
          .catch(() => undefined);
      worker.shutdown();
      await running;
      await native.close();
      await connection.close();
    },
  };
}
