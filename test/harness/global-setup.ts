/**
 * One real Temporal dev server (the installed `temporal` binary, SQLite file, free port) for the whole run,
 * and the workflow code bundled once.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleSagaWorkflows } from '../../src/worker/workflow-bundle';
import { startDevServerOnFreePorts, type DevServer } from '../../src/worker/dev-server';
import { PROJECT_ROOT } from '../../src/project-root';
import { ARTIFACTS_ROOT, type TestServerInfo } from './server';

declare global {
  var __SAGA_TEST_SERVER__: DevServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  // The real agent CLIs the preset tests run (test-only tools, not runtime dependencies); a no-op when the
  // pinned versions are there.
  execFileSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-agent-clis.sh')], { stdio: 'inherit' });
  const ARTIFACTS = path.join(ARTIFACTS_ROOT, `run-${process.pid}`);
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  process.env.JEST_SAGA_ARTIFACTS = ARTIFACTS;
  const SERVER_FILE = path.join(ARTIFACTS, 'server.json');
  const WORKFLOW_BUNDLE = path.join(ARTIFACTS, 'workflow-bundle.js');
  const dbFile = path.join(ARTIFACTS, 'temporal.db');
  const [server, bundle] = await Promise.all([
    startDevServerOnFreePorts({
      dbFile,
      headless: true,
      logFile: path.join(ARTIFACTS, 'server.log'),
      startTimeoutMs: 120_000,
    }),
    bundleSagaWorkflows(),
  ]);
  writeFileSync(WORKFLOW_BUNDLE, bundle);
  globalThis.__SAGA_TEST_SERVER__ = server;
  const info: TestServerInfo = {
    address: server.address,
    namespace: 'default',
    dbFile,
    port: Number(server.address.split(':')[1]),
    pid: server.process.pid!,
  };
  writeFileSync(SERVER_FILE, JSON.stringify(info));
}
