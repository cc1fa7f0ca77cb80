/**
 * What saga keeps is its owner's only: the saga home and each saga directory are 0700 (an older, open home
 * is made so), the record's files 0600, and the dev server's database, its journal and its log are
 * unreadable to other local users. A real saga (demo agent, real Temporal server) and a real dev server.
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { startDevServer } from '../../../../src/worker/dev-server';
import { freePort } from '../../../harness/wait';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import { createInProcessSagaEnv, waitForPending, type InProcessSagaEnv } from '../../../harness/saga-env';

const mode = (file: string) => statSync(file).mode & 0o777;

describe('private saga files', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('private-files');
  });
  afterAll(async () => env.close());

  test('the saga home and directory are 0700 and the record’s files 0600', async () => {
    // As an older version left it: open to every local user.
    mkdirSync(env.sagaHome, { recursive: true });
    chmodSync(env.sagaHome, 0o755);
    const { repo, planFile } = createFleetRepo(env.tmp('private'), {
      plan: {
        name: 'private',
        problem: 'A greeting file.',
        scope: { in: ['greeting.txt'], out: [], delegated: [] },
        exit_criteria: [{ id: 'E1', text: 'a greeting exists', check: 'test -s greeting.txt' }],
        milestones: [
          {
            id: 1,
            slug: 'core',
            title: 'Greeting',
            depends_on: [],
            goal: 'greeting.txt.',
            validation: [],
            tasks: [planTask(1, 'greet', ['greeting.txt'], 'test -s greeting.txt')],
          },
        ],
      },
      script: { tasks: { '1.1': { attempts: [{ files: { 'greeting.txt': 'Hello\n' } }] } } },
    });
    const { name, sagaDir } = await startApprovedSaga(env, {
      repo,
      planFile,
      name: 'private',
      args: 'Greeting',
    });
    await waitForPending(env, name, 'acceptance-1', 180_000);
    expect(mode(env.sagaHome).toString(8)).toBe('700');
    expect(mode(sagaDir).toString(8)).toBe('700');
    const written = readdirSync(sagaDir).filter((f) => f.endsWith('.md'));
    expect(written).toEqual(expect.arrayContaining(['SAGA.md', 'PROGRESS.md', 'REPORT.md']));
    expect(Object.fromEntries(written.map((f) => [f, mode(path.join(sagaDir, f)).toString(8)]))).toEqual(
      Object.fromEntries(written.map((f) => [f, '600'])),
    );
  }, 300_000);

  test('the dev server’s database folder is 0700, its database and log 0600', async () => {
    const data = path.join(env.tmp('dev'), 'home', '.temporal');
    const server = await startDevServer({
      dbFile: path.join(data, 'temporal.db'),
      logFile: path.join(data, 'server.log'),
      port: await freePort(),
      headless: true,
    });
    try {
      expect(mode(data).toString(8)).toBe('700');
      const files = readdirSync(data);
      expect(files).toEqual(expect.arrayContaining(['temporal.db', 'server.log']));
      for (const f of files) expect([f, mode(path.join(data, f)).toString(8)]).toEqual([f, '600']);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
