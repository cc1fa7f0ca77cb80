/**
 * The saga worker the bench measures, in its own process (forked with IPC) so its memory is its own:
 * exactly what `saga worker` runs (createSagaWorkers, workflows bundled at start), plus an RSS sampler.
 * Messages in: 'reset-peak', 'peak', 'stop'. Messages out: {type:'ready'}, {type:'peak', rss, overall,
 * cpuSeconds} (cpuSeconds: the worker's own user + system CPU so far; its agents' processes are not in it).
 */
import { NativeConnection } from '@temporalio/worker';
import { createSagaWorkers, installRuntime } from '../src/worker/worker';

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'peak'; rss: number; overall: number; cpuSeconds: number }
  | { type: 'error'; message: string };

const SAMPLE_MS = 25;

async function main(): Promise<void> {
  let peak = 0;
  let overall = 0;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    peak = Math.max(peak, rss);
    overall = Math.max(overall, rss);
  };
  const sampler = setInterval(sample, SAMPLE_MS);
  const send = (message: WorkerMessage) => process.send?.(message);

  installRuntime(); // before the connection, which would install the SDK's default runtime (INFO logs)
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const workers = await createSagaWorkers({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    sagaHome: process.env.SAGA_HOME!,
    hostId: process.env.SAGA_HOST_ID!,
    taskQueue: process.env.SAGA_TASK_QUEUE!,
  });
  const runs = workers.map((w) => w.run());
  process.on('message', (message: string) => {
    sample();
    if (message === 'reset-peak') peak = 0;
    else if (message === 'peak') {
      const cpu = process.cpuUsage();
      send({ type: 'peak', rss: peak, overall, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
    } else if (message === 'stop') for (const w of workers) w.shutdown();
  });
  send({ type: 'ready' });
  await Promise.all(runs);
  clearInterval(sampler);
  await connection.close();
  process.disconnect?.();
}

main().catch((error: unknown) => {
  process.send?.({ type: 'error', message: String((error as Error).stack ?? error) });
  process.exit(1);
});
