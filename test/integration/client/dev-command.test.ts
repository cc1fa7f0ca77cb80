/**
 * `saga dev` as a user runs it: embedded server with persistence + worker; Ctrl-C stops both cleanly;
 * after a SIGKILL (and the server dying with the machine) a new `saga dev` finds every saga again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../src/demo/sample-repo';
import { freePort } from '../../../src/worker/dev-server';
import { runSaga, SAGA_BIN } from '../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';

jest.setTimeout(240_000);

/** Pids of processes whose command line mentions `needle` (the server's db file is unique per test). */
function pidsMentioning(needle: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function startDev(
  env: NodeJS.ProcessEnv,
  args: string[] = ['--board-port', '0'],
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [SAGA_BIN, 'dev', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes('Press Ctrl-C to stop')) {
        clearInterval(timer);
        resolve({ child, output: () => out });
      }
    }, 200);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`saga dev exited early (${code}): ${out}`));
    });
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

describe('saga dev', () => {
  let env: SagaTestEnv;
  let devEnv: NodeJS.ProcessEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('dev');
    const port = await freePort();
    devEnv = { ...env.cliEnv, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, SAGA_UI_URL: '' };
  });
  afterAll(async () => {
    for (const pid of pidsMentioning(env.sagaHome)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await env.close();
  });

  test('persists sagas across a SIGKILL, and Ctrl-C stops server and worker', async () => {
    const dbNeedle = path.join(env.sagaHome, '.temporal', 'temporal.db');
    let dev = await startDev(devEnv);
    expect(dev.output()).toMatch(/Temporal Web UI: http:\/\/127\.0\.0\.1:\d+/);

    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const start = await runSaga(
      ['start', '--repo', repo, '--plan', GREETING_PLAN_FILE, '--name', 'survivor', '--', 'Add greeting'],
      devEnv,
    );
    expect(start.code).toBe(0);

    // A crash: saga dev is SIGKILLed and its server dies with the machine.
    dev.child.kill('SIGKILL');
    await exited(dev.child);
    for (const pid of pidsMentioning(dbNeedle)) process.kill(pid, 'SIGKILL');
    const down = await runSaga(['list'], devEnv);
    expect(down.code).toBe(2);

    dev = await startDev(devEnv);
    const status = await runSaga(['status', 'survivor', '--json'], devEnv);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).pending.map((p: { id: string }) => p.id)).toEqual(['confirm-name']);
    // The board came up with it, on the same server: it lists the saga, waiting for its name.
    const boardUrl = /Saga board: (http:\/\/127\.0\.0\.1:\d+)\//.exec(dev.output())?.[1];
    expect(boardUrl).toBeDefined();
    // Reads need the token it printed, with the URL that opens the board with it.
    const token = /Board token \(reads and answers need it[^)]*\): (\S+)/.exec(dev.output())?.[1];
    expect(dev.output()).toContain(`Open the board with it: ${boardUrl}/?token=${token}`);
    expect((await fetch(`${boardUrl}/api/sagas`)).status).toBe(401);
    const authorization = `Bearer ${token}`;
    const listed = (await (await fetch(`${boardUrl}/api/sagas`, { headers: { authorization } })).json()) as {
      sagas: { name: string; waiting: number }[];
    };
    expect(listed.sagas.map((s) => [s.name, s.waiting])).toEqual([['survivor', 1]]);

    // Ctrl-C: the worker drains and the embedded server stops with it.
    dev.child.kill('SIGINT');
    expect(await exited(dev.child)).toBe(0);
    expect(pidsMentioning(dbNeedle)).toEqual([]);
  });

  test('--no-board runs the server and worker without the board', async () => {
    const dev = await startDev(devEnv, ['--no-board']);
    expect(dev.output()).not.toMatch(/Saga board:/);
    dev.child.kill('SIGINT');
    expect(await exited(dev.child)).toBe(0);
  });
});
