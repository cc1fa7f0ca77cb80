/**
 * The sandbox around agents, checks and set-up commands, with real bubblewrap and real
 * processes in a real git worktree: what a confined process can see, write and reach, and that nothing it
 * starts outlives its run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runConfined, type SandboxRequest } from '../../../../src/activities/sandbox';
import { installRoot } from '../../../../src/activities/sandbox/layout';
import { processesWithEnv } from '../../../harness/processes';
import { bwrapArguments } from '../../../../src/activities/sandbox/bwrap-args';
import { hostsFile, networkRoutes } from '../../../../src/activities/sandbox/network-routes';
import { endpointsFromEnv, parseEndpoint } from '../../../../src/domain/config/sandbox';
import { PROJECT_ROOT } from '../../../../src/project-root';

const root = mkdtempSync(path.join(os.tmpdir(), 'saga-sandbox-'));
const repo = path.join(root, 'repo');
const worktree = path.join(root, 'saga-x-m1t1');
const sagaHome = path.join(root, 'home');
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@x', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

beforeAll(() => {
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'README.md'), 'hi\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'init');
  git(repo, 'worktree', 'add', '-q', '-b', 'saga/x/m1t1-a', worktree);
  mkdirSync(path.join(sagaHome, 'x'), { recursive: true });
  writeFileSync(path.join(sagaHome, 'x', 'SAGA.md'), 'the plan\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function sh(script: string, request: Partial<SandboxRequest> = {}, env: Record<string, string> = {}) {
  const outputPath = path.join(root, `out-${Math.random().toString(36).slice(2)}.log`);
  const run = await runConfined(
    { mode: 'auto', sagaHome, ...request },
    {
      argv: ['/bin/sh', '-c', script],
      cwd: worktree,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), ...env },
      outputPath,
      timeoutMs: 30_000,
    },
  );
  return { ...run, output: readFileSync(outputPath, 'utf8') };
}

describe('bubblewrap layout (pure)', () => {
  test('host:port entries parse, with clear errors', () => {
    expect(parseEndpoint('api.anthropic.com:443')).toEqual({ host: 'api.anthropic.com', port: 443 });
    expect(() => parseEndpoint('api.anthropic.com')).toThrow(/is not host:port/);
    expect(() => parseEndpoint('10.1.2.3:80')).toThrow(/give a host name/);
    expect(
      endpointsFromEnv({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100', OTHER_URL: 'http://x:1' }),
    ).toEqual([{ host: '127.0.0.1', port: 4100 }]);
  });

  test('host names get their own loopback address in the sandbox /etc/hosts', () => {
    const routes = networkRoutes([parseEndpoint('api.example.com:443'), parseEndpoint('127.0.0.1:4100')]);
    expect(routes.map((r) => r.address)).toEqual(['127.0.0.2', '127.0.0.1']);
    expect(hostsFile(routes)).toContain('127.0.0.2 api.example.com');
  });

  test('the working directory is bound writable after everything hidden or read-only', () => {
    const args = bwrapArguments(
      {
        cwd: '/w',
        hiddenDirs: ['/h'],
        hiddenFiles: [],
        readOnly: ['/r'],
        writable: [],
        runFiles: { readable: [], writable: [] },
        readOnlyOver: ['/w/.git'],
        network: null,
      },
      ['agent'],
      true,
    );
    const at = (flag: string, p: string) => args.findIndex((a, i) => a === flag && args[i + 1] === p);
    // /h holds no view: it goes over them; its files come back after it; it ends read-only.
    expect(at('--bind', '/w')).toBeLessThan(at('--tmpfs', '/h'));
    expect(at('--tmpfs', '/h')).toBeLessThan(at('--remount-ro', '/h'));
    expect(at('--bind', '/w')).toBeLessThan(at('--ro-bind', '/w/.git'));
    expect(args).toEqual(expect.arrayContaining(['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL']));
    expect(args.slice(-2)).toEqual(['--', 'agent']);
  });
  test('a hidden folder that holds the worktree (saga demo) is hidden first, the worktree shown inside', () => {
    const args = bwrapArguments(
      {
        cwd: '/h/repos/wt',
        hiddenDirs: ['/h'],
        hiddenFiles: [],
        readOnly: ['/h/repos/repo'],
        writable: [],
        runFiles: { readable: ['/h/x/runs/a/prompt.md'], writable: [] },
        readOnlyOver: [],
        network: null,
      },
      ['agent'],
      false,
    );
    const at = (flag: string, p: string) => args.findIndex((a, i) => a === flag && args[i + 1] === p);
    expect(at('--tmpfs', '/h')).toBeLessThan(at('--ro-bind', '/h/repos/repo'));
    expect(at('--tmpfs', '/h')).toBeLessThan(at('--bind', '/h/repos/wt'));
    expect(at('--tmpfs', '/h')).toBeLessThan(at('--ro-bind', '/h/x/runs/a/prompt.md'));
    expect(at('--remount-ro', '/h')).toBeGreaterThan(at('--bind', '/h/repos/wt'));
  });
});

describe('a confined process', () => {
  test('writes its worktree, and nothing of the repository, the saga home or the host', async () => {
    const run = await sh(
      [
        'echo ok > work.txt',
        `echo x > ${repo}/planted.txt || echo main-refused`,
        `echo '#!/bin/sh' > ${repo}/.git/hooks/post-commit || echo hooks-refused`,
        `git config core.fsmonitor evil 2>/dev/null || echo config-refused`,
        `echo 'gitdir: ${repo}/.git' > .git || echo pointer-refused`,
        `ls ${sagaHome}/x/SAGA.md 2>/dev/null || echo home-absent`,
        `echo x >> /etc/hostname 2>/dev/null || echo host-refused`,
        `git update-ref refs/heads/main HEAD 2>/dev/null || echo refs-refused`,
      ].join('; '),
    );
    expect(run.exitCode).toBe(0);
    for (const word of [
      'main-refused',
      'hooks-refused',
      'config-refused',
      'pointer-refused',
      'home-absent',
      'host-refused',
      'refs-refused',
    ]) {
      expect(run.output).toContain(word);
    }
    expect(readFileSync(path.join(worktree, 'work.txt'), 'utf8')).toBe('ok\n');
    expect(existsSync(path.join(repo, 'planted.txt'))).toBe(false);
    expect(existsSync(path.join(repo, '.git', 'hooks', 'post-commit'))).toBe(false);
    expect(readFileSync(path.join(worktree, '.git'), 'utf8')).toContain('worktrees');
  });

  test("sees no other process and none of the worker's environment", async () => {
    process.env.SAGA_TEST_WORKER_SECRET = 'worker-only';
    try {
      const run = await sh('ls /proc | grep -c "^[0-9]"; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"');
      expect(run.output).not.toContain('worker-only');
      expect(Number(run.output.split('\n')[0])).toBeLessThan(6);
    } finally {
      delete process.env.SAGA_TEST_WORKER_SECRET;
    }
  });

  test('a setsid double-forked helper dies when the run ends', async () => {
    const marker = path.join(worktree, 'helper-alive');
    const run = await sh(
      `setsid sh -c 'sleep 1; while true; do date > ${marker}; sleep 0.2; done' & echo started`,
    );
    expect(run.output).toContain('started');
    rmSync(marker, { force: true });
    await new Promise((r) => setTimeout(r, 1800));
    expect(existsSync(marker)).toBe(false);
  });

  test('reaches only the allowed host:port, not another local service', async () => {
    const serve = (reply: string) =>
      new Promise<net.Server>((resolve) => {
        const server = net.createServer((socket) => socket.end(reply));
        server.listen(0, '127.0.0.1', () => resolve(server));
      });
    const allowed = await serve('model-api');
    const temporal = await serve('temporal');
    const port = (s: net.Server) => (s.address() as net.AddressInfo).port;
    try {
      const read = (p: number) =>
        `node -e "const s=require('net').connect(${p},'127.0.0.1');s.on('data',d=>console.log('got',String(d)));s.on('error',e=>console.log('refused',${p}))"`;
      const run = await sh(`${read(port(allowed))}; ${read(port(temporal))}`, {
        network: [{ host: '127.0.0.1', port: port(allowed) }],
      });
      expect(run.output).toContain('got model-api');
      expect(run.output).toContain(`refused ${port(temporal)}`);
      expect(run.output).not.toContain('got temporal');
    } finally {
      allowed.close();
      temporal.close();
    }
  });
});

describe('a confined run and its worker', () => {
  test('a worker killed with SIGKILL takes its confined run with it (nothing is orphaned)', async () => {
    const mark = `SAGA_TEST_ORPHAN=${process.pid}-${Date.now()}`;
    const script = `
      const { runConfined } = require(${JSON.stringify(path.resolve(PROJECT_ROOT, 'dist/src/activities/sandbox/index.js'))});
      runConfined({ mode: 'auto', sagaHome: ${JSON.stringify(sagaHome)} }, {
        argv: ['/bin/sh', '-c', 'setsid sleep 300 & sleep 300'], cwd: ${JSON.stringify(worktree)},
        env: { PATH: process.env.PATH, HOME: ${JSON.stringify(os.homedir())}, ${JSON.stringify(mark.split('=')[0])}: ${JSON.stringify(mark.split('=')[1])} },
        outputPath: ${JSON.stringify(path.join(root, 'orphan.log'))},
      });`;
    const worker = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    for (let i = 0; i < 100 && processesWithEnv(mark).length < 2; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(processesWithEnv(mark).length).toBeGreaterThanOrEqual(2);
    // The run is up once its process tree stops growing (a loaded machine takes a while to start both sleeps):
    // the kill then tests a running confined run, not one halfway through its set-up.
    for (let i = 0, seen = -1; i < 100 && processesWithEnv(mark).length !== seen; i++) {
      seen = processesWithEnv(mark).length;
      await new Promise((r) => setTimeout(r, 300));
    }
    worker.kill('SIGKILL');
    // An orphan would live for its 300 s: the wait is long enough for a loaded machine to reap the run.
    for (let i = 0; i < 200 && processesWithEnv(mark).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(processesWithEnv(mark)).toEqual([]);
  });
});

describe('a program installed under /tmp', () => {
  test('its install root: the folder holding its node_modules, or its virtualenv, else the path itself', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'saga-install-root-'));
    try {
      const cli = path.join(root, 'tools', 'node_modules', '@scope', 'cli', 'bin.js');
      expect(installRoot(cli)).toBe(path.join(root, 'tools'));
      const venv = path.join(root, 'venv');
      mkdirSync(path.join(venv, 'bin'), { recursive: true });
      writeFileSync(path.join(venv, 'pyvenv.cfg'), 'home = /usr/bin\n');
      expect(installRoot(path.join(venv, 'bin', 'aider'))).toBe(venv);
      expect(installRoot(path.join(root, 'agent.js'))).toBe(path.join(root, 'agent.js'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a CLI linked from a PATH folder under /tmp runs confined: the package it points into is shown', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'saga-tmp-cli-'));
    try {
      const pkg = path.join(root, 'tools', 'node_modules', 'hello-cli');
      mkdirSync(pkg, { recursive: true });
      writeFileSync(path.join(pkg, 'greeting.txt'), 'hello from the package\n');
      writeFileSync(
        path.join(pkg, 'cli.sh'),
        `#!/bin/sh\ncat "$(dirname "$(readlink -f "$0")")/greeting.txt"\n`,
        {
          mode: 0o755,
        },
      );
      const bin = path.join(root, 'bin');
      mkdirSync(bin);
      execFileSync('ln', ['-s', path.join(pkg, 'cli.sh'), path.join(bin, 'hello')]);
      const cwd = mkdtempSync(path.join(root, 'work-'));
      const outputPath = path.join(root, 'out.log');
      const run = await runConfined(
        { mode: 'auto' },
        { argv: ['hello'], cwd, env: { PATH: `${bin}:/usr/bin:/bin`, HOME: os.homedir() }, outputPath },
      );
      expect(readFileSync(outputPath, 'utf8')).toContain('hello from the package');
      expect(run).toMatchObject({ exitCode: 0 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
