import { readFileSync, rmSync } from 'node:fs';
import { ARTIFACTS, SERVER_FILE, type TestServerInfo } from './server';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__SAGA_TEST_SERVER__?.stop();
  // A test may have restarted the server (persistence test): stop whatever the file names now.
  try {
    const info = JSON.parse(readFileSync(SERVER_FILE, 'utf8')) as TestServerInfo;
    process.kill(-info.pid, 'SIGTERM');
  } catch {
    /* already stopped */
  }
  if (!process.env.SAGA_KEEP_TEST_ARTIFACTS) rmSync(ARTIFACTS, { recursive: true, force: true });
}
