/**
 * The bubblewrap arguments for a layout the activity worked out (layout.ts) and the narrowing it adds
 * (hardening.ts), as data. Pure, so the layout is unit-tested without spawning.
 */

/** What one confined process sees, as the activity worked it out from the host. */
export interface SandboxLayout {
  /** Its working directory, writable. */
  cwd: string;
  /** Hidden: an empty folder (dirs) or an empty file (files) in their place. */
  hiddenDirs: string[];
  hiddenFiles: string[];
  /** Read-only views of host paths (the repository, the program and files its command names under /tmp). */
  readOnly: string[];
  /** Writable host folders besides cwd (a profile's own HOME). */
  writable: string[];
  /**
   * Host paths shown at another path, in order (a later one over an earlier one): the saga's private
   * package caches and CLI state over the user's, the CLI's credential files read-only inside them.
   */
  binds?: { source: string; dest: string; readOnly: boolean }[];
  /** Empty writable folders that end with the run (package caches of a run that belongs to no saga). */
  scratch?: string[];
  /** The run's own files, shown even inside hidden folders: its prompt (read-only) and report (writable). */
  runFiles: { readable: string[]; writable: string[] };
  /** Read-only after the writable ones (the worktree's `.git` pointer file). */
  readOnlyOver: string[];
  /** With network routes: the folder holding the entry script and sockets (the worker's, seen only by
   * the forwarders), the hosts file, and whether a port below 1024 is forwarded. */
  network: {
    dir: string;
    hosts: string;
    lowPorts: boolean;
    /** The catcher's resolv.conf and where it goes (the host's /etc/resolv.conf, its link followed). */
    resolv?: { source: string; dest: string } | null;
  } | null;
}

const isInside = (parent: string, child: string) =>
  child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

/** What narrows a confined process beyond its file system view and network (see hardening.ts). */
export interface SandboxHardening {
  /** The bwrap binary (the network sandbox starts the confined one inside it). */
  bwrap: string;
  /** The descriptor bwrap reads the seccomp program from (seccomp.ts); null: no filter. */
  seccompFd: number | null;
  /** `--disable-userns` (bubblewrap 0.8 and later): no user namespace nested in the sandbox's. */
  disableUserns: boolean;
  /** The uid and gid inside; null keeps the worker's own (mapped to itself). */
  uid: number | null;
  /** Per-process limits set inside the sandbox, by prlimit, before the command starts. */
  limits: ProcessLimits | null;
  /** setpriv (util-linux), which drops the network sandbox's capability before the confined bwrap. */
  setpriv: string | null;
}

export interface ProcessLimits {
  prlimit: string;
  /** RLIMIT_NPROC: tasks (processes and threads) of the sandbox's user in its own user namespace. */
  tasks: number;
  /** RLIMIT_DATA: each process's data (heap and private writable mappings), in bytes. */
  dataBytes: number;
}

/** The uid and gid a worker running as root runs confined processes as (nobody, no capabilities). */
export const UNPRIVILEGED_ID = 65534;
export const DEFAULT_LIMITS = { tasks: 1024, dataBytes: 8 * 1024 ** 3 } as const;

const NO_HARDENING: SandboxHardening = {
  bwrap: 'bwrap',
  seccompFd: null,
  disableUserns: false,
  uid: null,
  limits: null,
  setpriv: null,
};

/**
 * The bubblewrap arguments for `layout`, then `argv`. Later mounts win over earlier ones at a path.
 * With network routes, these are the arguments of a small network sandbox (its own user and network
 * namespaces) whose entry script starts the forwarders and then the confined sandbox in that network.
 */
export function bwrapArguments(
  layout: SandboxLayout,
  argv: readonly string[],
  hasRun: boolean,
  hardening: SandboxHardening = NO_HARDENING,
): string[] {
  const args = [
    // Own PID, network, IPC, UTS and user namespaces (a user namespace of its own, which no process inside
    // can nest another in); no capabilities, so nothing mounted here can be unmounted; the whole tree
    // dies with the run. With routes, the network namespace is the network sandbox's.
    '--unshare-all',
    ...(layout.network ? ['--share-net'] : []),
    '--unshare-user',
    ...(hardening.disableUserns ? ['--disable-userns'] : []),
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    ...(hardening.uid === null ? [] : ['--uid', String(hardening.uid), '--gid', String(hardening.uid)]),
    '--hostname',
    'saga-sandbox',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // Not the host's /sys (devices, firmware, kernel knobs): the CPU list alone, which tools size pools by.
    '--tmpfs',
    '/sys',
    '--ro-bind-try',
    '/sys/devices/system/cpu',
    '/sys/devices/system/cpu',
    '--remount-ro',
    '/sys',
    '--tmpfs',
    '/tmp',
    ...(hasRun ? ['--tmpfs', '/run'] : []),
  ];
  // A hidden folder that holds a view (a worktree inside the saga home, as `saga demo` makes them) is
  // hidden first and the view shown inside it; any other hidden path goes over the views.
  const binds = layout.binds ?? [];
  const views = [layout.cwd, ...layout.readOnly, ...layout.writable, ...binds.map((b) => b.dest)];
  // Its working directory is never hidden, whatever else it is.
  const hiddenDirs = layout.hiddenDirs.filter((dir) => dir !== layout.cwd);
  const holdsView = (dir: string) => views.some((v) => v !== dir && isInside(dir, v));
  for (const dir of hiddenDirs.filter(holdsView)) args.push('--tmpfs', dir);
  for (const p of layout.readOnly) args.push('--ro-bind', p, p);
  args.push('--bind', layout.cwd, layout.cwd);
  for (const p of layout.writable) args.push('--bind', p, p);
  for (const p of layout.scratch ?? []) args.push('--tmpfs', p);
  for (const b of binds) args.push(b.readOnly ? '--ro-bind' : '--bind', b.source, b.dest);
  for (const dir of hiddenDirs.filter((d) => !holdsView(d))) args.push('--tmpfs', dir);
  for (const file of layout.hiddenFiles) args.push('--ro-bind', '/dev/null', file);
  for (const p of layout.runFiles.readable) args.push('--ro-bind', p, p);
  for (const p of layout.runFiles.writable) args.push('--bind', p, p);
  for (const p of layout.readOnlyOver) args.push('--ro-bind', p, p);
  // The hidden folders end up empty and read-only (what is shown inside keeps its own mode): a write there
  // fails, rather than "working" in a scratch folder.
  for (const dir of hiddenDirs) args.push('--remount-ro', dir);
  if (layout.network) args.push('--ro-bind', layout.network.hosts, '/etc/hosts');
  const resolv = layout.network?.resolv;
  if (resolv) args.push('--ro-bind', resolv.source, resolv.dest);
  // Loaded by bwrap right before it starts the command: everything confined runs under it.
  if (hardening.seccompFd !== null) args.push('--seccomp', String(hardening.seccompFd));
  const limits = hardening.limits;
  const command = limits
    ? [limits.prlimit, `--nproc=${limits.tasks}`, `--data=${limits.dataBytes}`, '--', ...argv]
    : [...argv];
  args.push('--chdir', layout.cwd, '--', ...command);
  if (!layout.network) return args;
  return [...networkSandboxArguments(layout.network, hardening), hardening.bwrap, ...args];
}

/**
 * The network sandbox around the confined one: a user and network namespace of its own with the host's
 * files as they are, its entry script (the forwarders) and then the confined sandbox's bwrap command line. Its
 * /proc is the host's: the confined bwrap writes its user namespace's maps there, and mounts a /proc of
 * its own inside, from which nothing of the network sandbox is visible. A root worker's network sandbox
 * keeps root's capabilities in its own user namespace (bwrap run by root sets up the nested one with
 * them); another worker's gets none but binding a port below 1024, dropped again (setpriv) before the
 * confined bwrap starts, which refuses to run with capabilities it did not expect.
 */
function networkSandboxArguments(
  network: NonNullable<SandboxLayout['network']>,
  hardening: SandboxHardening,
): string[] {
  const root = hardening.uid !== null;
  const capAdd = !root && network.lowPorts;
  if (capAdd && !hardening.setpriv) throw new Error('setpriv is needed to forward a port below 1024');
  return [
    '--unshare-user',
    '--unshare-net',
    '--die-with-parent',
    ...(root ? [] : ['--cap-drop', 'ALL']),
    ...(capAdd ? ['--cap-add', 'CAP_NET_BIND_SERVICE'] : []),
    // Writable: the confined sandbox's writable binds are made from this view, and a bind of a read-only
    // mount stays read-only. Nothing but saga's own script, socat and bwrap runs here.
    '--bind',
    '/',
    '/',
    '--bind',
    '/proc',
    '/proc',
    '--dev',
    '/dev',
    '--',
    '/bin/sh',
    `${network.dir}/entry.sh`,
    ...(capAdd ? [hardening.setpriv!, '--inh-caps=-all', '--ambient-caps=-all'] : []),
  ];
}
