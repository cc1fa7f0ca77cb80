/**
 * The narrower sandbox, pure parts: the seccomp program (run here through a small classic-BPF
 * interpreter, for both architectures, as the kernel would run it on each system call), the bubblewrap
 * arguments that load it and nest the confined sandbox in the network one, which addresses count as this
 * machine's or its private network's, and the network bridge's check of an allowed name's addresses.
 */
import { spawnSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runConfined } from '../../../../src/activities/sandbox';
import { isInternalAddress } from '../../../../src/activities/sandbox/addresses';
import {
  bwrapArguments,
  DEFAULT_LIMITS,
  type SandboxHardening,
  type SandboxLayout,
} from '../../../../src/activities/sandbox/bwrap-args';
import { networkEntryScript, networkRoutes } from '../../../../src/activities/sandbox/network-routes';
import {
  AUDIT_ARCH_AARCH64,
  AUDIT_ARCH_X86_64,
  CLONE_NEWUSER,
  encodeProgram,
  seccompProgram,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SYSCALLS,
  type BpfInstruction,
} from '../../../../src/activities/sandbox/seccomp';
import { checkedAddress } from '../../../../src/activities/sandbox/network-bridge';

/** Runs `program` on one system call as the kernel does: 32-bit loads from seccomp_data, jumps, return. */
function run(program: readonly BpfInstruction[], arch: number, nr: number, args: number[] = []): number {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((a, i) => data.writeUInt32LE(a >>> 0, 16 + 8 * i));
  let acc = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const ins = program[pc]!;
    switch (ins.code) {
      case 0x20:
        acc = data.readUInt32LE(ins.k);
        break;
      case 0x15:
        pc += acc === ins.k >>> 0 ? ins.jt : ins.jf;
        break;
      case 0x35:
        pc += acc >= ins.k >>> 0 ? ins.jt : ins.jf;
        break;
      case 0x45:
        pc += (acc & ins.k) !== 0 ? ins.jt : ins.jf;
        break;
      case 0x06:
        return ins.k >>> 0;
      default:
        throw new Error(`unexpected opcode ${ins.code} at ${pc}`);
    }
  }
  throw new Error('fell off the end of the program');
}

const ERR = (n: number) => (SECCOMP_RET_ERRNO | n) >>> 0;
const EPERM = ERR(1);
const EACCES = ERR(13);
const ENOSYS = ERR(38);

describe('the seccomp program', () => {
  const program = seccompProgram();

  test('is well formed: every jump lands inside it, every path ends in a return', () => {
    program.forEach((ins, pc) => {
      if ([0x15, 0x35, 0x45].includes(ins.code)) {
        expect(pc + 1 + ins.jt).toBeLessThan(program.length);
        expect(pc + 1 + ins.jf).toBeLessThan(program.length);
      }
    });
    expect(program.at(-1)!.code).toBe(0x06);
    expect(program.length).toBeLessThan(4096); // BPF_MAXINSNS
    const bytes = encodeProgram(program);
    expect(bytes.length).toBe(program.length * 8);
    expect(bytes.readUInt16LE(0)).toBe(0x20);
    expect(bytes.readUInt32LE(4)).toBe(4); // loads the architecture first
  });

  test('ends a process making system calls of another architecture (32-bit ones on a 64-bit kernel)', () => {
    expect(run(program, 0x40000003 /* AUDIT_ARCH_I386 */, 0)).toBe(SECCOMP_RET_KILL_PROCESS);
    expect(run(program, 0xc00000b7 + 1, 0)).toBe(SECCOMP_RET_KILL_PROCESS);
  });

  for (const table of SYSCALLS) {
    const n = table.numbers;
    describe(table.name, () => {
      const call = (nr: number, ...args: number[]) => run(program, table.arch, nr, args);
      test('refuses new user namespaces by clone and unshare, and clone3 outright (ENOSYS: libc falls back)', () => {
        expect(call(n.clone, CLONE_NEWUSER | 17)).toBe(EPERM);
        expect(call(n.unshare, CLONE_NEWUSER)).toBe(EPERM);
        expect(call(n.unshare, CLONE_NEWUSER | 0x20000)).toBe(EPERM);
        expect(call(n.clone3, 0)).toBe(ENOSYS);
        // fork and threads (clone without CLONE_NEWUSER) run.
        expect(call(n.clone, 17)).toBe(SECCOMP_RET_ALLOW);
        expect(call(n.clone, 0x3d0f00)).toBe(SECCOMP_RET_ALLOW);
      });
      test('refuses Unix sockets but for socketpair; other sockets run', () => {
        expect(call(n.socket, 1, 1, 0)).toBe(EACCES);
        expect(call(n.socket, 1, 2 | 0x80000, 0)).toBe(EACCES);
        expect(call(n.socket, 2, 1, 0)).toBe(SECCOMP_RET_ALLOW);
        expect(call(n.socket, 10, 2, 0)).toBe(SECCOMP_RET_ALLOW);
        const socketpair = table.arch === AUDIT_ARCH_X86_64 ? 53 : 199;
        expect(call(socketpair, 1, 1, 0)).toBe(SECCOMP_RET_ALLOW);
      });
      test('refuses ptrace, keyrings, bpf, perf, userfaultfd, mounts, setns, modules, kexec; io_uring with ENOSYS', () => {
        for (const name of [
          'ptrace',
          'process_vm_readv',
          'process_vm_writev',
          'keyctl',
          'add_key',
          'request_key',
          'bpf',
          'perf_event_open',
          'userfaultfd',
          'mount',
          'umount2',
          'pivot_root',
          'setns',
          'init_module',
          'finit_module',
          'delete_module',
          'kexec_load',
          'kexec_file_load',
          'open_tree',
          'fsopen',
          'move_mount',
        ] as const) {
          expect([name, call(n[name])]).toEqual([name, EPERM]);
        }
        for (const name of ['io_uring_setup', 'io_uring_enter', 'io_uring_register'] as const) {
          expect([name, call(n[name])]).toEqual([name, ENOSYS]);
        }
      });
      test('lets everything else run (read, write, openat, execve, mmap, socketpair, prctl, seccomp)', () => {
        const allowed =
          table.arch === AUDIT_ARCH_X86_64
            ? [0, 1, 257, 59, 9, 157, 317, 39]
            : [63, 64, 56, 221, 222, 167, 277, 172];
        for (const nr of allowed) expect([nr, call(nr)]).toEqual([nr, SECCOMP_RET_ALLOW]);
      });
    });
  }

  test('refuses x32 system calls on x86_64 (the same calls under other numbers)', () => {
    expect(run(program, AUDIT_ARCH_X86_64, 0x40000000 + 101)).toBe(ENOSYS);
    expect(run(program, AUDIT_ARCH_X86_64, 0x40000000 + 41, [1])).toBe(ENOSYS);
    expect(run(program, AUDIT_ARCH_AARCH64, 0x40000000)).toBe(SECCOMP_RET_ALLOW); // no such ABI there
  });
});

const layout = (network: SandboxLayout['network'] = null): SandboxLayout => ({
  cwd: '/w',
  hiddenDirs: [],
  hiddenFiles: [],
  readOnly: [],
  writable: [],
  runFiles: { readable: [], writable: [] },
  readOnlyOver: [],
  network,
});
const hardening = (over: Partial<SandboxHardening> = {}): SandboxHardening => ({
  bwrap: '/usr/bin/bwrap',
  seccompFd: 3,
  disableUserns: true,
  uid: null,
  limits: { prlimit: '/usr/bin/prlimit', ...DEFAULT_LIMITS },
  setpriv: '/usr/bin/setpriv',
  ...over,
});
const pair = (args: string[], flag: string, value: string) =>
  args.some((a, i) => a === flag && args[i + 1] === value);

describe('bubblewrap arguments of the narrower sandbox', () => {
  test('own user namespace with none nested, no capability, the seccomp program, a /sys of its own', () => {
    const args = bwrapArguments(layout(), ['agent', '-p'], true, hardening());
    for (const flag of ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent']) {
      expect(args).toContain(flag);
    }
    expect(pair(args, '--cap-drop', 'ALL')).toBe(true);
    expect(pair(args, '--seccomp', '3')).toBe(true);
    expect(args).not.toContain('--share-net');
    expect(args).not.toContain('--cap-add');
    // /sys: a tmpfs after the host's root, the CPU list alone in it, read-only.
    const at = (flag: string, p: string) => args.findIndex((a, i) => a === flag && args[i + 1] === p);
    expect(at('--ro-bind', '/')).toBeLessThan(at('--tmpfs', '/sys'));
    expect(at('--tmpfs', '/sys')).toBeLessThan(at('--ro-bind-try', '/sys/devices/system/cpu'));
    expect(at('--ro-bind-try', '/sys/devices/system/cpu')).toBeLessThan(at('--remount-ro', '/sys'));
    // The filter is loaded after every mount; the limits are set inside, then the command runs.
    expect(args.indexOf('--seccomp')).toBeGreaterThan(at('--bind', '/w'));
    const command = args.slice(args.indexOf('--chdir') + 3);
    expect(command).toEqual([
      '/usr/bin/prlimit',
      `--nproc=${DEFAULT_LIMITS.tasks}`,
      `--data=${DEFAULT_LIMITS.dataBytes}`,
      '--',
      'agent',
      '-p',
    ]);
    expect(args).not.toContain('--uid');
  });

  test('a root worker runs it as nobody', () => {
    const args = bwrapArguments(layout(), ['agent'], true, hardening({ uid: 65534 }));
    expect(pair(args, '--uid', '65534')).toBe(true);
    expect(pair(args, '--gid', '65534')).toBe(true);
  });

  test('without --disable-userns (bubblewrap before 0.8), the filter alone refuses nested user namespaces', () => {
    const args = bwrapArguments(layout(), ['agent'], true, hardening({ disableUserns: false }));
    expect(args).not.toContain('--disable-userns');
    expect(args).toContain('--seccomp');
  });

  test('with routes: a network sandbox runs the forwarders, then the confined sandbox in its network', () => {
    const network = { dir: '/tmp/saga-net-x', hosts: '/tmp/saga-net-x/hosts', lowPorts: true };
    const args = bwrapArguments(layout(network), ['agent'], true, hardening());
    const inner = args.indexOf('/usr/bin/bwrap');
    const outer = args.slice(0, inner);
    const confined = args.slice(inner + 1);
    // The network sandbox: own user and network namespaces, the capability to bind port 443 alone,
    // dropped before the confined bwrap; its entry script starts the forwarders.
    expect(outer).toEqual(expect.arrayContaining(['--unshare-user', '--unshare-net', '--die-with-parent']));
    // Its view of the host is writable, or the confined sandbox's writable binds made from it are not.
    expect(pair(outer, '--bind', '/')).toBe(true);
    expect(pair(outer, '--cap-add', 'CAP_NET_BIND_SERVICE')).toBe(true);
    expect(outer.slice(outer.indexOf('--'))).toEqual([
      '--',
      '/bin/sh',
      '/tmp/saga-net-x/entry.sh',
      '/usr/bin/setpriv',
      '--inh-caps=-all',
      '--ambient-caps=-all',
    ]);
    // The confined sandbox shares that network only, under the filter, without the capability.
    expect(confined).toEqual(expect.arrayContaining(['--unshare-all', '--share-net', '--disable-userns']));
    expect(pair(confined, '--seccomp', '3')).toBe(true);
    expect(pair(confined, '--ro-bind', '/tmp/saga-net-x/hosts')).toBe(true);
    expect(confined).not.toContain('--cap-add');
    expect(confined).not.toContain('/tmp/saga-net-x');
    expect(confined.at(-1)).toBe('agent');
  });

  test("a root worker's network sandbox keeps root's capabilities there (its nested bwrap needs them)", () => {
    const network = { dir: '/n', hosts: '/n/hosts', lowPorts: true };
    const args = bwrapArguments(layout(network), ['agent'], true, hardening({ uid: 65534, setpriv: null }));
    const outer = args.slice(0, args.indexOf('/usr/bin/bwrap'));
    expect(outer).not.toContain('--cap-drop');
    expect(outer).not.toContain('--cap-add');
    expect(outer.slice(outer.indexOf('--'))).toEqual(['--', '/bin/sh', '/n/entry.sh']);
  });
});

test("the network sandbox's forwarders end with it, even when the worker is killed (parent-death signal)", () => {
  const routes = networkRoutes([{ host: 'api.example.com', port: 443 }]);
  const script = networkEntryScript(routes, '/usr/bin/socat', '/tmp/saga-net-x', '/usr/bin/setpriv');
  expect(script).toContain(
    '/usr/bin/setpriv --pdeathsig KILL /usr/bin/socat TCP-LISTEN:443,bind=127.0.0.2,fork,reuseaddr UNIX-CONNECT:/tmp/saga-net-x/0.sock &',
  );
  expect(script.trim().split('\n').at(-1)).toBe('exec "$@"');
});

describe('internal addresses', () => {
  test.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['8.8.8.8', false],
    ['104.18.32.7', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd00:ec2::254', true],
    ['fc00::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:169.254.169.254', true],
    ['::ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    ['2606:4700::6810:84e5', false],
    ['not-an-address', true],
  ])('%s → %s', (address, internal) => {
    expect(isInternalAddress(address)).toBe(internal);
  });
});

describe('an allowed name, checked after resolution', () => {
  const resolving =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address }));
  test('goes to the address it resolves to when that is public', async () => {
    await expect(
      checkedAddress({ host: 'api.example.com', port: 443 }, resolving('104.18.32.7')),
    ).resolves.toBe('104.18.32.7');
  });
  test.each([['127.0.0.1'], ['10.0.0.5'], ['169.254.169.254'], ['::1'], ['fe80::1']])(
    'is refused when it resolves to %s',
    async (address) => {
      await expect(
        checkedAddress({ host: 'api.example.com', port: 443 }, resolving(address)),
      ).rejects.toThrow(new RegExp(`api.example.com:443 resolves to ${address.replace(/\./g, '\\.')}`));
    },
  );
  test('is refused when any of its addresses is internal, or it resolves to none', async () => {
    await expect(
      checkedAddress({ host: 'api.example.com', port: 443 }, resolving('104.18.32.7', '127.0.0.1')),
    ).rejects.toThrow(/127\.0\.0\.1/);
    await expect(checkedAddress({ host: 'api.example.com', port: 443 }, resolving())).rejects.toThrow(
      /resolves to nothing/,
    );
  });
  test('this machine named literally stays allowed, without asking DNS', async () => {
    const never = async () => {
      throw new Error('looked up');
    };
    await expect(checkedAddress({ host: '127.0.0.1', port: 8080 }, never)).resolves.toBe('127.0.0.1');
    await expect(checkedAddress({ host: 'localhost', port: 8080 }, never)).resolves.toBe('127.0.0.1');
  });
});

describe('a confined run with an allowed endpoint (real bubblewrap, real bridge)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-narrow-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const serve = () =>
    new Promise<{ server: net.Server; port: number; connections: () => number }>((resolve) => {
      let count = 0;
      const server = net.createServer((socket) => {
        count++;
        socket.end('model-api');
      });
      server.listen(0, '127.0.0.1', () =>
        resolve({ server, port: (server.address() as net.AddressInfo).port, connections: () => count }),
      );
    });
  const confined = async (script: string, host: string, port: number) => {
    const outputPath = path.join(dir, `out-${Math.random().toString(36).slice(2)}.log`);
    const run = await runConfined(
      { mode: 'auto', network: [{ host, port }] },
      {
        argv: ['/bin/sh', '-c', script],
        cwd: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir() },
        outputPath,
        timeoutMs: 30_000,
      },
    );
    return { ...run, output: readFileSync(outputPath, 'utf8') };
  };
  const read = (host: string, port: number) =>
    `node -e "const s=require('net').connect(${port},'${host}');s.on('data',d=>console.log('got',String(d)));s.on('close',()=>console.log('closed'));s.on('error',e=>console.log('error',e.code))"`;

  test('writes its working directory and reaches the endpoint, under the filter', async () => {
    const api = await serve();
    try {
      const run = await confined(
        `echo written > here.txt && ${read('127.0.0.1', api.port)}; unshare -U true 2>/dev/null || echo no-userns`,
        '127.0.0.1',
        api.port,
      );
      expect(run.output).toContain('got model-api');
      expect(run.output).toContain('no-userns');
      expect(readFileSync(path.join(dir, 'here.txt'), 'utf8')).toBe('written\n');
    } finally {
      api.server.close();
    }
  });

  test('an allowed name that resolves to this machine is refused, and said in the output', async () => {
    // This machine's own name resolves to one of its addresses wherever /etc/hosts names it.
    const name = os.hostname().toLowerCase();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (!/^[a-z0-9.-]+$/.test(name) || !addresses.some((a) => isInternalAddress(a.address))) return;
    const api = await serve();
    try {
      const run = await confined(read(name, api.port), name, api.port);
      expect(run.output).not.toContain('got model-api');
      expect(run.output).toContain(`[saga sandbox] connection refused: ${name}:${api.port} resolves to`);
      expect(api.connections()).toBe(0);
    } finally {
      api.server.close();
    }
  });
});

describe('the task limit (real bubblewrap)', () => {
  // The kernel does not apply RLIMIT_NPROC to uid 0, so a root worker's sandboxes have none; any other
  // worker's do. Run here as an unprivileged user (setpriv) when the test runs as root.
  const root = process.getuid?.() === 0;
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => spawnSync(p, ['--version']).status === 0);
  const prlimit = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => spawnSync(p, ['--version']).status === 0);

  test('a sandbox of a worker not run as root cannot fork past it; below it, it forks', () => {
    if (!prlimit || (root && !setpriv)) return;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'saga-nproc-'));
    chmodSync(dir, 0o755);
    try {
      const fork = (count: number) => {
        const args = bwrapArguments(
          layout(),
          ['/bin/sh', '-c', `i=0; while [ $i -lt ${count} ]; do sleep 2 & i=$((i+1)); done; echo forked $i`],
          false,
          hardening({ seccompFd: null, limits: { prlimit, tasks: 40, dataBytes: DEFAULT_LIMITS.dataBytes } }),
        ).map((a) => (a === '/w' ? dir : a));
        const argv = root
          ? [setpriv!, '--reuid=65534', '--regid=65534', '--clear-groups', 'bwrap', ...args]
          : ['bwrap', ...args];
        const run = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 30_000 });
        return `${run.stdout}${run.stderr}`;
      };
      expect(fork(20)).toContain('forked 20');
      const past = fork(60);
      expect(past).not.toContain('forked 60');
      expect(past).toMatch(/fork|Resource temporarily unavailable/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
