/**
 * The server suite's one stack: builds the pinned temporal-server, temporal-sql-tool and UI server the
 * first time (about 8 minutes on 2 cores; cached in tools/ after), then starts PostgreSQL, the server and
 * the UI server on free ports in a temp folder. bin/saga runs dist/, so the build must be current
 * (`npm run test:server` builds first).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ARTIFACTS_ROOT, type TestServerInfo } from '../harness/server';
import { freePortBase, serverPid, stackFile, startStack, stopStack } from './stack';

export default async function globalSetup(): Promise<void> {
  const artifacts = path.join(ARTIFACTS_ROOT, `server-run-${process.pid}`);
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  process.env.JEST_SAGA_ARTIFACTS = artifacts;

  // A short path: PostgreSQL's socket lives in the data folder, and socket paths are limited to 107 bytes.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-stack-'));
  chmodSync(dir, 0o755);
  const started = Date.now();
  const env = await startStack(dir, { portBase: await freePortBase() }).catch(async (error: unknown) => {
    await stopStack(dir); // whatever part had started
    throw error;
  });
  console.log(`\nserver stack up in ${Math.round((Date.now() - started) / 1000)} s: ${JSON.stringify(env)}`);
  writeFileSync(stackFile(), JSON.stringify({ dir, env }));
  // The shared harness (saga-env, worker-process) finds the server through server.json.
  const address = env.TEMPORAL_ADDRESS!;
  const info: TestServerInfo = {
    address,
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
    dbFile: path.join(dir, 'pgdata'),
    port: Number(address.split(':')[1]),
    pid: serverPid(dir),
  };
  writeFileSync(path.join(artifacts, 'server.json'), JSON.stringify(info));
}
