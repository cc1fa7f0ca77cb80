/**
 * The seccomp filter of a confined process, as a classic BPF program bubblewrap loads (`--seccomp FD`)
 * just before it starts the command: system calls that reach past the sandbox's namespaces (new user
 * namespaces, mounts, ptrace, kernel keyrings, BPF, io_uring, modules) and Unix sockets other than
 * socketpair fail with an error; everything else runs. Pure, so its structure is unit-tested; the kernel
 * checks it when it loads it.
 */

/** One `struct sock_filter`: code, jump if true, jump if false, constant. */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

export const EPERM = 1;
export const EACCES = 13;
export const ENOSYS = 38;

export const AUDIT_ARCH_X86_64 = 0xc000003e;
export const AUDIT_ARCH_AARCH64 = 0xc00000b7;

/** Offsets in `struct seccomp_data`: nr, arch, then the low 32 bits of each argument (little-endian). */
const DATA_NR = 0;
const DATA_ARCH = 4;
const argLow = (index: number) => 16 + 8 * index;

export const CLONE_NEWUSER = 0x10000000;
export const AF_UNIX = 1;
/** x32 system calls on x86_64 have this bit set; they would otherwise pass under other numbers. */
const X32_SYSCALL_BIT = 0x40000000;

/** The system calls the filter names, per architecture. */
interface SyscallTable {
  arch: number;
  name: 'x86_64' | 'aarch64';
  numbers: Record<SyscallName, number>;
}

/** Refused whatever their arguments. */
const DENIED = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'kexec_load',
  'kexec_file_load',
  'mount',
  'umount2',
  'pivot_root',
  'setns',
  'init_module',
  'finit_module',
  'delete_module',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  'open_by_handle_at',
] as const;

/** Refused with ENOSYS, so libraries fall back to what the filter checks (clone3's flags are in memory,
 * so it cannot be checked: glibc then uses clone) or to plain I/O (io_uring). */
const UNIMPLEMENTED = ['clone3', 'io_uring_setup', 'io_uring_enter', 'io_uring_register'] as const;

/** Every system call the filter names: the refused ones, and those checked by argument. */
type SyscallName = (typeof DENIED)[number] | (typeof UNIMPLEMENTED)[number] | 'clone' | 'unshare' | 'socket';

export const SYSCALLS: readonly SyscallTable[] = [
  {
    arch: AUDIT_ARCH_X86_64,
    name: 'x86_64',
    numbers: {
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      kexec_load: 246,
      kexec_file_load: 320,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      setns: 308,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      open_by_handle_at: 304,
      clone: 56,
      unshare: 272,
      socket: 41,
      clone3: 435,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
    },
  },
  {
    arch: AUDIT_ARCH_AARCH64,
    name: 'aarch64',
    numbers: {
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      kexec_load: 104,
      kexec_file_load: 294,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      setns: 268,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
      open_tree: 428,
      move_mount: 429,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      mount_setattr: 442,
      open_by_handle_at: 265,
      clone: 220,
      unshare: 97,
      socket: 198,
      clone3: 435,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
    },
  },
];

const ld = (offset: number): BpfInstruction => ({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (k: number): BpfInstruction => ({ code: RET_K, jt: 0, jf: 0, k });
const errno = (n: number) => ret(SECCOMP_RET_ERRNO | n);
const allow = () => ret(SECCOMP_RET_ALLOW);

/** The rules of one architecture; the accumulator holds the system call number on entry. Each rule
 * either returns or, when its call is not the one made, leaves the number for the next, so no jump is
 * longer than a few instructions. */
function archRules(table: SyscallTable): BpfInstruction[] {
  const n = table.numbers;
  const out: BpfInstruction[] = [ld(DATA_NR)];
  if (table.arch === AUDIT_ARCH_X86_64) {
    out.push({ code: JGE_K, jt: 0, jf: 1, k: X32_SYSCALL_BIT }, errno(ENOSYS));
  }
  for (const name of DENIED) out.push({ code: JEQ_K, jt: 0, jf: 1, k: n[name] }, errno(EPERM));
  for (const name of UNIMPLEMENTED) out.push({ code: JEQ_K, jt: 0, jf: 1, k: n[name] }, errno(ENOSYS));
  // clone(flags, ...) and unshare(flags): no new user namespace (both take the flags first).
  for (const name of ['clone', 'unshare'] as const) {
    out.push(
      { code: JEQ_K, jt: 0, jf: 4, k: n[name] },
      ld(argLow(0)),
      { code: JSET_K, jt: 0, jf: 1, k: CLONE_NEWUSER },
      errno(EPERM),
      allow(),
    );
  }
  // socket(AF_UNIX, ...): no Unix socket to connect to or listen on; socketpair (a pair already
  // connected to each other, what pipes between processes are made of) stays.
  out.push(
    { code: JEQ_K, jt: 0, jf: 3, k: n.socket },
    ld(argLow(0)),
    { code: JEQ_K, jt: 0, jf: 1, k: AF_UNIX },
    errno(EACCES),
  );
  out.push(allow());
  return out;
}

/** The whole program: dispatch on the architecture in seccomp_data, then that architecture's rules;
 * any other architecture (e.g. 32-bit system calls on a 64-bit kernel) ends the process. */
export function seccompProgram(): BpfInstruction[] {
  const blocks = SYSCALLS.map(archRules);
  const program: BpfInstruction[] = [ld(DATA_ARCH)];
  // A jump per architecture to its block, which follows the jumps and the kill (jumps count from the
  // next instruction).
  const jumps = SYSCALLS.map((table, i) => {
    const jt = SYSCALLS.length - i + blocks.slice(0, i).reduce((sum, b) => sum + b.length, 0);
    return { code: JEQ_K, jt, jf: 0, k: table.arch };
  });
  program.push(...jumps, ret(SECCOMP_RET_KILL_PROCESS));
  for (const block of blocks) program.push(...block);
  for (const ins of program) {
    if (ins.jt > 255 || ins.jf > 255) throw new Error('seccomp program: a jump is longer than 255');
  }
  return program;
}

/** The program as the kernel reads it: 8 bytes per instruction, in this machine's byte order
 * (little-endian on both architectures). */
export function encodeProgram(program: readonly BpfInstruction[]): Buffer {
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    buffer.writeUInt16LE(ins.code, i * 8);
    buffer.writeUInt8(ins.jt, i * 8 + 2);
    buffer.writeUInt8(ins.jf, i * 8 + 3);
    buffer.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return buffer;
}
