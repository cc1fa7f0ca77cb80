/** Where the test run's Temporal dev server is (started once by the jest global setup). */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Each jest run gets its own folder (set by the global setup), so concurrent runs never share a server. */
export const ARTIFACTS_ROOT = path.resolve(__dirname, '..', '..', '.test-artifacts');
/** The real agent CLIs installed for tests by scripts/install-agent-clis.sh (links to each). */
export const AGENT_CLI_BIN = path.resolve(__dirname, '..', '..', 'tools', 'agent-bin');
export const ARTIFACTS = process.env.JEST_SAGA_ARTIFACTS ?? path.join(ARTIFACTS_ROOT, 'current');
export const SERVER_FILE = path.join(ARTIFACTS, 'server.json');
export const WORKFLOW_BUNDLE = path.join(ARTIFACTS, 'workflow-bundle.js');

export interface TestServerInfo {
  address: string;
  namespace: string;
  dbFile: string;
  port: number;
  pid: number;
}

export function testServer(): TestServerInfo {
  return JSON.parse(readFileSync(SERVER_FILE, 'utf8')) as TestServerInfo;
}
