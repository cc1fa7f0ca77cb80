/**
 * `saga start` prints the saga's Web UI link in the namespace it started the saga in (TEMPORAL_NAMESPACE),
 * not always `default`. The server is a stand-in that only records the start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { parseArgs } from '../../../src/client/args';
import { startCommand } from '../../../src/client/commands/start';
import { COMMAND_DECLS } from '../../../src/client/declarations';
import { createSampleRepo } from '../../../src/demo/sample-repo';

describe('saga start: the Web UI link', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'start-link-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  test("names the connection's namespace", async () => {
    process.env.SAGA_HOME = path.join(tmp, 'home');
    process.env.SAGA_UI_URL = 'http://ui.example:8080';
    const repo = createSampleRepo(path.join(tmp, 'repo'));
    const started: unknown[] = [];
    const client = {
      options: { namespace: 'team-a' },
      workflow: {
        start: async (...args: unknown[]) => {
          started.push(args);
          return { firstExecutionRunId: 'run-1' };
        },
      },
    } as unknown as Client;
    const out: string[] = [];
    const code = await startCommand(
      parseArgs(COMMAND_DECLS, 'start', [
        '--repo',
        repo,
        '--name',
        'link-ns',
        '--skip-agent-check',
        '--',
        'Ship it',
      ]),
      { out: (line) => out.push(line), err: (line) => out.push(line) },
      async () => client,
    );
    expect(code).toBe(0);
    expect(started).toHaveLength(1);
    expect(out).toContain('Web UI: http://ui.example:8080/namespaces/team-a/workflows/saga-link-ns');
  });
});
