/**
 * An agent that reaches past the sandbox's namespaces, in a real saga (real Temporal server, real repo,
 * real processes): it makes a user namespace of its own (unshare, a nested bwrap, the system call itself),
 * connects to a Unix socket of the host it can see and to an abstract one, traces a process beside it,
 * reads root's password file and forks past its limit. Each is refused (the seccomp filter,
 * --disable-userns, the hidden files, the limits), the host's sockets saw no connection, and the task's own
 * work (which runs git and node children over socketpairs) still lands.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import {
  createFleetRepo,
  git,
  oneFilePlan,
  startApprovedSaga,
  waitsForUserOrEnded,
} from '../../../harness/fleet-saga';
import { createSagaTestEnv, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';

let env: SagaTestEnv;

beforeAll(async () => {
  env = await createSagaTestEnv('rogue-sandbox');
  await env.startWorkers();
});
afterAll(async () => {
  await env?.close();
});

/** The agent: each attempt's outcome in attempts.json (in its worktree, so it lands for the test to read). */
const rogueAgent = (hostSocket: string, abstractName: string) => `
const fs = require('node:fs');
const net = require('node:net');
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const out = {};
const run = (file, args) => {
  const r = spawnSync(file, args, { encoding: 'utf8', timeout: 20000 });
  if (r.error) return 'refused: ' + r.error.code;
  return (r.status === 0 ? 'ran: ' : 'refused: ') + (r.stdout + r.stderr).trim().split('\\n').pop();
};
const connect = (target) => new Promise((resolve) => {
  const s = net.connect(target);
  s.on('connect', () => { s.write('ESCAPED\\n'); s.end(); resolve('CONNECTED'); });
  s.on('error', (e) => resolve('refused: ' + e.code));
});
(async () => {
  out.uid = execFileSync('id', ['-u'], { encoding: 'utf8' }).trim();
  out.unshare = run('unshare', ['-U', '-r', 'id', '-u']);
  out.unshareFork = run('unshare', ['-U', '--fork', 'true']);
  out.nestedBwrap = run('bwrap', ['--unshare-user', '--ro-bind', '/', '/', 'true']);
  out.unshareCall = run('python3', ['-c', 'import ctypes; l = ctypes.CDLL(None, use_errno=True); r = l.unshare(0x10000000); print(r, ctypes.get_errno()); raise SystemExit(0 if r == 0 else 1)']);
  out.socketVisible = (() => { try { return fs.statSync(${JSON.stringify(hostSocket)}).isSocket() ? 'socket' : 'other'; } catch (e) { return 'absent ' + e.code; } })();
  out.hostSocket = await connect(${JSON.stringify(hostSocket)});
  out.hostSocketSocat = run('socat', ['-u', 'OPEN:/etc/hostname', 'UNIX-CONNECT:' + ${JSON.stringify(hostSocket)}]);
  out.abstractSocket = await connect('\\0' + ${JSON.stringify(abstractName)});
  // A sibling to trace: attach with the system call itself, and with strace where installed.
  const sibling = spawn('sleep', ['30'], { stdio: 'ignore' });
  out.ptrace = run('python3', ['-c', 'import ctypes, sys; l = ctypes.CDLL(None, use_errno=True); r = l.ptrace(16, int(sys.argv[1]), 0, 0); print("PTRACED" if r == 0 else "errno %d" % ctypes.get_errno()); raise SystemExit(0 if r == 0 else 1)', String(sibling.pid)]);
  out.vmRead = run('python3', ['-c', 'import ctypes, sys; l = ctypes.CDLL(None, use_errno=True); r = l.process_vm_readv(int(sys.argv[1]), 0, 0, 0, 0, 0); print(r, ctypes.get_errno()); raise SystemExit(0 if r == 0 else 1)', String(sibling.pid)]);
  sibling.kill('SIGKILL');
  out.shadow = (() => { try { return 'read ' + fs.readFileSync('/etc/shadow', 'utf8').length + ' bytes'; } catch (e) { return 'refused: ' + e.code; } })();
  out.sys = fs.readdirSync('/sys').join(',');
  out.limits = fs.readFileSync('/proc/self/limits', 'utf8').split('\\n').filter((l) => /Max (processes|data size)/.test(l)).map((l) => l.replace(/\\s+/g, ' ').trim()).join('; ');
  // Past the task limit: 1100 processes (the limit is 1024 tasks, threads included).
  out.forks = run('sh', ['-c', 'i=0; while [ $i -lt 1100 ]; do sleep 3 & i=$((i+1)); done 2>/dev/null; echo forked $i; wait']);
  fs.writeFileSync('attempts.json', JSON.stringify(out, null, 2));
  fs.writeFileSync('work.txt', execFileSync('git', ['rev-parse', '--is-inside-work-tree'], { encoding: 'utf8' }));
  process.exit(0); // whatever an escape left behind (a traced sibling) does not hold the run
})();
`;

test('a rogue agent makes no user namespace, reaches no host socket, traces nothing; its task lands', async () => {
  const dir = env.tmp('rogue');
  const name = 'rogue-sandbox';
  const check = 'test -f work.txt';
  const abstractName = `saga-rogue-${path.basename(dir)}`;
  const agent = path.join(dir, 'rogue.js');
  const { repo, planFile } = createFleetRepo(dir, {
    plan: oneFilePlan(name, check),
    script: {},
    config: `agents:\n  rogue: { command: ["{node}", ${JSON.stringify(agent)}] }\n`,
  });
  // Host sockets the sandbox can see (the repository is shown read-only) or name: whatever connects
  // leaves a marker outside.
  const hostSocket = path.join(repo, 'host.sock');
  writeFileSync(agent, rogueAgent(hostSocket, abstractName));
  const marker = path.join(dir, 'reached-the-host');
  const listen = (target: string) =>
    new Promise<net.Server>((resolve) => {
      const server = net.createServer((socket) => {
        writeFileSync(marker, `${target}\n`, { flag: 'a' });
        socket.destroy();
      });
      server.listen(target, () => resolve(server));
    });
  const servers = [await listen(hostSocket), await listen(`\0${abstractName}`)];
  try {
    await startApprovedSaga(env, { repo, planFile, name, args: 'Write work.txt', agent: 'rogue' });
    const status = await waitForStatus(env, name, waitsForUserOrEnded, 180_000);
    const transcript = path.join(status.sagaDir, 'runs', 'm1t1-d1-a1', 'transcript.log');
    expect({
      phase: status.phase,
      transcript: status.phase === 'acceptance' ? '' : readFileSync(transcript, 'utf8'),
    }).toEqual({ phase: 'acceptance', transcript: '' });
    const task = status.milestones[0]!.tasks[0]!;
    expect(task.status).toBe('integrated');
    // git and node children ran (pipes are socketpairs, which the filter lets through).
    expect(git(repo, 'show', `${status.integrationBranch}:work.txt`)).toBe('true');

    const attempts = JSON.parse(git(repo, 'show', `${task.branch}:attempts.json`)) as Record<string, string>;
    for (const attempt of [
      'unshare',
      'unshareFork',
      'nestedBwrap',
      'unshareCall',
      'hostSocket',
      'hostSocketSocat',
      'abstractSocket',
      'ptrace',
      'vmRead',
      'shadow',
    ]) {
      expect([attempt, attempts[attempt]]).toEqual([attempt, expect.stringMatching(/^refused/)]);
    }
    // The socket was there to connect to; the filter, not its absence, refused it.
    expect(attempts.socketVisible).toBe('socket');
    expect(attempts.hostSocket).toBe('refused: EACCES');
    expect(attempts.unshareCall).toMatch(/-1 1$/); // EPERM from the filter
    expect(attempts.ptrace).toMatch(/errno 1$/);
    expect(existsSync(marker)).toBe(false);
    // A root worker's agent runs as nobody; /sys is its own; the limits are set.
    if (process.getuid?.() === 0) expect(attempts.uid).toBe('65534');
    expect(attempts.sys).toBe('devices');
    expect(attempts.limits).toContain('Max processes 1024 1024 processes');
    expect(attempts.limits).toContain('Max data size 8589934592 8589934592 bytes');
    // The kernel does not apply the task limit to root (uid 0 outside the sandbox): past it only then.
    if (process.getuid?.() !== 0) expect(attempts.forks).not.toContain('forked 1100');

    const later = await waitForStatus(
      env,
      name,
      (s) => s.pending.some((p) => p.kind === 'acceptance'),
      30_000,
    );
    await respond(env.client, name, {
      interactionId: later.pending.find((p) => p.kind === 'acceptance')!.id,
      choice: 'accept',
      user: 'test',
    });
    await waitForStatus(env, name, (s) => s.phase === 'complete', 60_000);
  } finally {
    for (const server of servers) server.close();
  }
}, 240_000);
