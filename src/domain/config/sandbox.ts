/**
 * The sandbox around every process saga starts for an agent, a check or a set-up command, as
 * data: the modes of `sandbox:` in saga.config.yaml, the network allow-list entries, and the bubblewrap
 * arguments for a layout the activity worked out. Pure, so the layout is unit-tested without spawning.
 */
import { z } from 'zod';

/** `auto` (default): confined, refused when no sandbox tool is installed; `none`: unconfined, said loudly. */
export const SANDBOX_MODES = ['auto', 'none'] as const;
export const SandboxModeSchema = z.enum(SANDBOX_MODES);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** How checks and set-up commands run, as it travels in activity inputs. */
export const CommandSandboxSchema = z.object({
  mode: SandboxModeSchema.default('auto'),
  network: z.array(z.string()).default([]),
  /**
   * The config files the worker reads again before it runs a command unconfined or with network (the
   * input's word is not enough): the user's (null: the worker's saga home's) and a trusted repository's.
   */
  sources: z.object({ user: z.string().nullable(), repo: z.string().nullable() }).nullable().optional(),
});
export type CommandSandbox = z.infer<typeof CommandSandboxSchema>;

/** One host and port a confined process may connect to. */
export interface Endpoint {
  host: string;
  port: number;
}

const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host:port` → an endpoint; throws a message naming what is wrong. IPv4 addresses and names only. */
export function parseEndpoint(text: string): Endpoint {
  const match = /^([^:\s]+):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || !HOST.test(match[1]!) || port < 1 || port > 65535) {
    throw new Error(`'${text}' is not host:port (e.g. api.anthropic.com:443 or 127.0.0.1:8080)`);
  }
  // A name is mapped to a loopback address inside the sandbox; another machine's bare IP cannot be.
  if (/^\d+\.\d+\.\d+\.\d+$/.test(match[1]!) && match[1] !== '127.0.0.1') {
    throw new Error(
      `'${text}': give a host name, or 127.0.0.1 for this machine (other IP addresses cannot be routed)`,
    );
  }
  return { host: match[1]!.toLowerCase(), port };
}

export const NetworkEntrySchema = z.string().superRefine((text, ctx) => {
  try {
    parseEndpoint(text);
  } catch (err) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
  }
});

export const endpointKey = (e: Endpoint) => `${e.host}:${e.port}`;

/**
 * Endpoints a process's own environment points it at: model API base URLs (`ANTHROPIC_BASE_URL`,
 * `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`, `OPENAI_API_BASE`, ...) and HTTP(S) proxies. A URL the
 * user gave the agent is a destination they meant it to reach.
 */
export function endpointsFromEnv(env: Readonly<Record<string, string | undefined>>): Endpoint[] {
  const found: Endpoint[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value || !/(_BASE_URL|_API_BASE|^HTTPS?_PROXY|^https?_proxy)$/.test(name)) continue;
    try {
      const url = new URL(value);
      const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      found.push(parseEndpoint(`${url.hostname}:${port}`));
    } catch {
      // Not a URL: nothing to allow.
    }
  }
  return found;
}

export function uniqueEndpoints(endpoints: readonly Endpoint[]): Endpoint[] {
  const seen = new Map<string, Endpoint>();
  for (const e of endpoints) seen.set(endpointKey(e), e);
  return [...seen.values()];
}

/** Where an allowed endpoint is reached inside the sandbox: a loopback address and the same port. */
export interface NetworkRoute {
  endpoint: Endpoint;
  /** The address the in-sandbox forwarder listens on (127.0.0.1 for loopback endpoints). */
  address: string;
  /** The worker-side socket file it forwards to, named inside the bound socket folder. */
  socket: string;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1']);

/**
 * One route per endpoint: loopback endpoints keep 127.0.0.1; each other host name gets its own loopback
 * address (127.0.0.2, ...), which the sandbox's /etc/hosts maps it to.
 */
export function networkRoutes(endpoints: readonly Endpoint[]): NetworkRoute[] {
  const addresses = new Map<string, string>();
  let next = 2;
  return uniqueEndpoints(endpoints).map((endpoint, index) => {
    let address = LOOPBACK_NAMES.has(endpoint.host) ? '127.0.0.1' : addresses.get(endpoint.host);
    if (!address) {
      address = `127.0.${next >> 8}.${next & 255}`;
      next++;
      addresses.set(endpoint.host, address);
    }
    return { endpoint, address, socket: `${index}.sock` };
  });
}

/** The sandbox's /etc/hosts: localhost, and each allowed host name at its loopback address. */
export function hostsFile(routes: readonly NetworkRoute[]): string {
  const lines = ['127.0.0.1 localhost', '::1 localhost'];
  const named = new Map<string, string>();
  for (const r of routes) if (!LOOPBACK_NAMES.has(r.endpoint.host)) named.set(r.endpoint.host, r.address);
  for (const [host, address] of named) lines.push(`${address} ${host}`);
  return `${lines.join('\n')}\n`;
}

/** `/proc/net/tcp`'s spelling of a listening socket's local address (little-endian IPv4, hex port). */
export function procNetTcpAddress(address: string, port: number): string {
  const octets = address.split('.').map(Number).reverse();
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  return `${octets.map((o) => hex(o, 2)).join('')}:${hex(port, 4)}`;
}

/** Where the network helper files appear inside the sandbox. */
export const SANDBOX_NET_DIR = '/run/saga-net';

/**
 * The sandbox's entry script when it has routes: a socat forwarder per route (TCP on the loopback
 * address → the worker's socket), a wait until each listens, then the command (`"$@"`). Only numbers and
 * fixed paths go into this text; the command stays an argument array.
 */
export function networkEntryScript(routes: readonly NetworkRoute[], socat: string): string {
  // Waiting is done by the shell's own builtins (no process per poll): a few milliseconds, at most ~5 s.
  const lines = [
    'set -e',
    'listening() { n=0; while :; do',
    '  while IFS= read -r l; do case "$l" in *" $1 00000000:0000 0A "*) return 0;; esac; done < /proc/net/tcp',
    '  n=$((n+1)); [ $n -lt 100000 ] || exit 97; done; }',
  ];
  for (const r of routes) {
    lines.push(
      `${socat} TCP-LISTEN:${r.endpoint.port},bind=${r.address},fork,reuseaddr UNIX-CONNECT:${SANDBOX_NET_DIR}/${r.socket} &`,
    );
  }
  for (const r of routes) lines.push(`listening ${procNetTcpAddress(r.address, r.endpoint.port)}`);
  lines.push('exec "$@"');
  return `${lines.join('\n')}\n`;
}

/** What one confined process sees, as the activity worked it out from the host. */
export interface SandboxLayout {
  /** Its working directory, writable. */
  cwd: string;
  /** Hidden: an empty folder (dirs) or an empty file (files) in their place. */
  hiddenDirs: string[];
  hiddenFiles: string[];
  /** Read-only views of host paths (the repository, the program and files its command names under /tmp). */
  readOnly: string[];
  /** Writable host folders besides cwd (the agent CLI's own state, package caches). */
  writable: string[];
  /** The run's own files, shown even inside hidden folders: its prompt (read-only) and report (writable). */
  runFiles: { readable: string[]; writable: string[] };
  /** Read-only after the writable ones (the worktree's `.git` pointer file). */
  readOnlyOver: string[];
  /** With network routes: the folder holding the entry script and sockets, the hosts file, and whether a
   * port below 1024 is forwarded. */
  network: { dir: string; hosts: string; lowPorts: boolean } | null;
}

const isInside = (parent: string, child: string) =>
  child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);

/** The bubblewrap arguments for `layout`, then `argv`. Later mounts win over earlier ones at a path. */
export function bwrapArguments(layout: SandboxLayout, argv: readonly string[], hasRun: boolean): string[] {
  const args = [
    // Own PID, network, IPC, UTS (and user when possible) namespaces; no capabilities, so nothing mounted
    // here can be unmounted; the whole tree dies with the run.
    '--unshare-all',
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--hostname',
    'saga-sandbox',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...(hasRun ? ['--tmpfs', '/run'] : []),
  ];
  // A hidden folder that holds a view (a worktree inside the saga home, as `saga demo` makes them) is
  // hidden first and the view shown inside it; any other hidden path goes over the views.
  const views = [layout.cwd, ...layout.readOnly, ...layout.writable];
  // Its working directory is never hidden, whatever else it is.
  const hiddenDirs = layout.hiddenDirs.filter((dir) => dir !== layout.cwd);
  const holdsView = (dir: string) => views.some((v) => v !== dir && isInside(dir, v));
  for (const dir of hiddenDirs.filter(holdsView)) args.push('--tmpfs', dir);
  for (const p of layout.readOnly) args.push('--ro-bind', p, p);
  args.push('--bind', layout.cwd, layout.cwd);
  for (const p of layout.writable) args.push('--bind', p, p);
  for (const dir of hiddenDirs.filter((d) => !holdsView(d))) args.push('--tmpfs', dir);
  for (const file of layout.hiddenFiles) args.push('--ro-bind', '/dev/null', file);
  for (const p of layout.runFiles.readable) args.push('--ro-bind', p, p);
  for (const p of layout.runFiles.writable) args.push('--bind', p, p);
  for (const p of layout.readOnlyOver) args.push('--ro-bind', p, p);
  // The hidden folders end up empty and read-only (what is shown inside keeps its own mode): a write there
  // fails, rather than "working" in a scratch folder.
  for (const dir of hiddenDirs) args.push('--remount-ro', dir);
  let command = [...argv];
  if (layout.network?.lowPorts) {
    // The forwarder listens on the endpoint's own port (443): binding it needs this one capability, which
    // reaches no further than the sandbox's own network namespace.
    args.push('--cap-add', 'CAP_NET_BIND_SERVICE');
  }
  if (layout.network) {
    args.push('--ro-bind', layout.network.hosts, '/etc/hosts', '--bind', layout.network.dir, SANDBOX_NET_DIR);
    command = ['/bin/sh', `${SANDBOX_NET_DIR}/entry.sh`, ...argv];
  }
  args.push('--chdir', layout.cwd, '--', ...command);
  return args;
}
