/**
 * `npm run bench:fleet` (node dist/bench/fleet.js): the fleet of sagas of saga-fleet.ts on its own dev
 * server, without the rest of bench:server (which runs the same on each of its targets), then what sagas
 * that wait cost their worker (idle-sagas.ts). Progress goes to stderr so stdout holds only the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { dataConverterFromEnv } from '../src/codec/config';
import { installRuntime } from '../src/worker/worker';
import { startBenchServer } from './bench-worker';
import { printFigures, runBench } from './figures';
import { idleSagaFigures } from './idle-sagas';
import { sagaFleetFigures } from './saga-fleet';

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = os.loadavg()[0]!;
  const root = mkdtempSync(path.join(os.tmpdir(), 'saga-fleet-'));
  installRuntime();
  const { server, env } = await startBenchServer(root, 'bench-fleet');
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({ connection, namespace: 'default', dataConverter: dataConverterFromEnv() });
    const figures = await sagaFleetFigures('dev', client, root, env);
    figures.push(...(await idleSagaFigures(client, root, env)));
    printFigures(figures, { at: started, load: loadAtStart });
  } finally {
    await connection.close();
    await server.stop();
    if (!process.env.BENCH_KEEP) rmSync(root, { recursive: true, force: true });
  }
}

runBench('fleet', main);
