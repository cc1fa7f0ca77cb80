/**
 * No HTTP door into the server: `bin/saga dev` as a user runs it (dev server with its Web UI, the board, the
 * codec endpoint, a codec key set), and a web page's drive-by: a cross-site `text/plain` POST (no preflight)
 * with `Origin: http://evil.example` to EVERY TCP port the dev process tree listens on, at the paths that
 * would start a workflow (the frontend's HTTP API, the Web UI's API), answer a saga (the board) or decrypt
 * (the codec endpoint, its secret path included). Each is refused, and the client finds no workflow started.
 * Then a workflow started in plaintext on the saga queue (as anyone who reaches the frontend could) does not
 * run: its workflow task fails with the codec's refusal, and no activity is ever scheduled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { freePort } from '../../../../src/worker/dev-server';
import { SAGA_BIN } from '../../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../../harness/saga-env';

jest.setTimeout(240_000);

const KEY = randomBytes(32).toString('hex');
const EVIL = 'http://evil.example';

/** Pids of `root` and every process below it. */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      // The command name may hold spaces and parentheses: the fields after its last ')' are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++)
    for (const [pid, parent] of parents) if (parent === tree[i] && !tree.includes(pid)) tree.push(pid);
  return tree;
}

/** Every TCP port the processes listen on (IPv4 and IPv6), from their socket inodes. */
function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const link = (() => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return '';
          }
        })();
        const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        if (inode) inodes.add(inode);
      }
    } catch {
      /* gone */
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6'])
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is the tenth field.
      if (fields.length > 9 && fields[3] === '0A' && inodes.has(fields[9]!))
        ports.add(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  return [...ports].sort((a, b) => a - b);
}

/** A browser's cross-site form-like POST: no preflight, so it is sent whatever the server's CORS says. */
function crossSitePost(port: number, path: string, body: string): Promise<number | 'no HTTP answer'> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          host: `127.0.0.1:${port}`,
          origin: EVIL,
          'content-type': 'text/plain;charset=UTF-8',
          'sec-fetch-site': 'cross-site',
          'sec-fetch-mode': 'no-cors',
        },
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('no HTTP answer'));
    req.end(body);
  });
}

describe('saga dev opens no HTTP door to a web page', () => {
  let env: SagaTestEnv;
  let dev: ChildProcess;
  let output = '';
  let client: Client;
  let connection: Connection;
  let taskQueue: string;
  const [ports] = [{ grpc: 0, ui: 0, codec: 0 }];

  beforeAll(async () => {
    env = await createSagaTestEnv('doors');
    taskQueue = env.taskQueue;
    ports.grpc = await freePort();
    ports.ui = await freePort();
    ports.codec = await freePort();
    dev = spawn(
      process.execPath,
      [
        SAGA_BIN,
        'dev',
        '--board-port',
        '0',
        '--ui-port',
        String(ports.ui),
        '--codec-port',
        String(ports.codec),
      ],
      {
        env: {
          ...env.cliEnv,
          TEMPORAL_ADDRESS: `127.0.0.1:${ports.grpc}`,
          SAGA_UI_URL: '',
          SAGA_CODEC_KEY: KEY,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    dev.stdout!.on('data', (d) => (output += d));
    dev.stderr!.on('data', (d) => (output += d));
    const deadline = Date.now() + 150_000;
    while (!output.includes('Press Ctrl-C to stop') && dev.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    if (!output.includes('Press Ctrl-C to stop')) throw new Error(`saga dev did not start: ${output}`);
    connection = await Connection.connect({ address: `127.0.0.1:${ports.grpc}` });
    client = new Client({ connection, namespace: 'default' });
  });

  afterAll(async () => {
    await connection?.close();
    if (dev && dev.exitCode === null) {
      const exited = new Promise((r) => dev.once('exit', r));
      dev.kill('SIGINT');
      await exited;
    }
    await env?.close();
  });

  const notStarted = async (workflowId: string) => {
    try {
      await client.workflow.getHandle(workflowId).describe();
      return false;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return true;
      throw error;
    }
  };

  test('a cross-site text/plain POST to every port it listens on is refused, and starts nothing', async () => {
    const boardPort = Number(/Saga board: http:\/\/127\.0\.0\.1:(\d+)\//.exec(output)?.[1]);
    const codecUrl = /Codec endpoint for the Web UI: (http:\/\/127\.0\.0\.1:\d+\S*)/.exec(output)?.[1];
    expect({ boardPort: boardPort > 0, codecUrl }).toEqual({ boardPort: true, codecUrl: expect.any(String) });
    const codecPath = new URL(codecUrl!).pathname.replace(/\/$/, '');
    const tree = processTree(dev.pid!);
    // The frontend's HTTP API port, as saga dev gave it to the temporal CLI.
    const temporalArgs = tree
      .map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        } catch {
          return [];
        }
      })
      .find((args) => args.includes('start-dev'));
    const httpApiPort = Number(temporalArgs?.[temporalArgs.indexOf('--http-port') + 1]);
    const listening = listeningPorts(tree);
    // Every door a browser could knock on is among them (plus the server's gRPC and metrics ports).
    expect(listening).toEqual(
      expect.arrayContaining([ports.grpc, ports.ui, ports.codec, boardPort, httpApiPort]),
    );

    const answers: Record<string, number | string> = {};
    const workflowIds: string[] = [];
    for (const port of listening) {
      const workflowId = `drive-by-${port}`;
      workflowIds.push(workflowId);
      const start = JSON.stringify({
        workflowId,
        workflowType: { name: 'sagaWorkflow' },
        taskQueue: { name: taskQueue },
        input: [{ goal: 'pwned', sandbox: 'none' }],
      });
      const paths = [
        `/api/v1/namespaces/default/workflows/${workflowId}`,
        '/api/sagas/drive-by/respond',
        `${codecPath}/decode`,
        '/',
      ];
      for (const path of paths) {
        const status = await crossSitePost(
          port,
          path,
          path.includes('/workflows/') ? start : '{"payloads":[]}',
        );
        answers[`${port} ${path}`] = status;
      }
    }
    // Refused: no HTTP answer at all (gRPC ports), or a 4xx; never a 2xx or 3xx.
    const accepted = Object.entries(answers).filter(
      ([, status]) => typeof status === 'number' && status < 400,
    );
    expect({ accepted, ports: listening.length }).toEqual({ accepted: [], ports: listening.length });
    // The doors that matter answered with a refusal of their own (not merely an unknown path).
    expect(answers[`${httpApiPort} /api/v1/namespaces/default/workflows/drive-by-${httpApiPort}`]).toBe(403);
    // The Web UI's own API: its CSRF check (a header a cross-site page can neither read nor set).
    expect([400, 403]).toContain(
      answers[`${ports.ui} /api/v1/namespaces/default/workflows/drive-by-${ports.ui}`],
    );
    expect(answers[`${boardPort} /api/sagas/drive-by/respond`]).toBe(403);
    expect(answers[`${ports.codec} ${codecPath}/decode`]).toBe(403);
    for (const workflowId of workflowIds)
      expect({ workflowId, notStarted: await notStarted(workflowId) }).toEqual({
        workflowId,
        notStarted: true,
      });
  });

  test('the board reads nothing without its token, and not cross-site with it', async () => {
    const boardUrl = /Saga board: (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)![1]!;
    const token = /Board token \(reads and answers need it[^)]*\): (\S+)/.exec(output)?.[1];
    expect(token).toBeDefined();
    expect((await fetch(`${boardUrl}/api/sagas`)).status).toBe(401);
    expect((await fetch(`${boardUrl}/api/events`)).status).toBe(401);
    const authorization = `Bearer ${token}`;
    expect((await fetch(`${boardUrl}/api/sagas`, { headers: { authorization } })).status).toBe(200);
    expect(
      (await fetch(`${boardUrl}/api/sagas`, { headers: { authorization, 'sec-fetch-site': 'cross-site' } }))
        .status,
    ).toBe(403);
  });

  test('with a codec key set, a workflow started in plaintext on the saga queue does not run', async () => {
    const workflowId = `plaintext-${Date.now().toString(36)}`;
    // The raw client has no codec: its input reaches the worker as plaintext, as anyone's who reaches the server.
    const handle = await client.workflow.start('sagaWorkflow', {
      workflowId,
      taskQueue,
      args: [{ goal: 'pwned', sandbox: 'none' }],
    });
    const deadline = Date.now() + 60_000;
    let failure: string | undefined;
    while (!failure && Date.now() < deadline) {
      const { events } = await handle.fetchHistory();
      failure = events
        ?.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message)
        .find((m): m is string => !!m);
      if (!failure) await new Promise((r) => setTimeout(r, 500));
    }
    expect(failure).toMatch(/Refused a payload that is not encrypted .*a codec key is set/);
    const { events } = await handle.fetchHistory();
    expect(events?.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('test done');
  });
});
