/**
 * The sandbox's network routes, as data: the loopback address that reaches each allowed endpoint from inside,
 * the hosts file, and the forwarders' entry script. Pure.
 */
import { uniqueEndpoints, type Endpoint } from '../../domain/config/sandbox';

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

/** The worker's socket, in the bridge's folder, that the sandbox's name lookups are forwarded to. */
export const DNS_SOCKET = 'dns.sock';

/** The sandbox's /etc/resolv.conf when names are caught: the catcher alone, answered at once. */
export const CATCHER_RESOLV_CONF = 'nameserver 127.0.0.1\noptions timeout:2 attempts:1\n';

/** `/proc/net/tcp`'s spelling of a listening socket's local address (little-endian IPv4, hex port). */
export function procNetTcpAddress(address: string, port: number): string {
  const octets = address.split('.').map(Number).reverse();
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  return `${octets.map((o) => hex(o, 2)).join('')}:${hex(port, 4)}`;
}

/**
 * The network sandbox's entry script: a socat forwarder per route (TCP on the loopback address → the
 * worker's socket in `socketDir`), a wait until each listens, then the command (`"$@"`, the confined
 * sandbox). It runs outside the seccomp filter, which refuses Unix sockets, and outside the confined
 * sandbox's PID namespace, so nothing confined can see, trace or take over the forwarders. Only numbers and
 * fixed paths go into this text; the command stays an argument array.
 */
export function networkEntryScript(
  routes: readonly NetworkRoute[],
  socat: string,
  socketDir: string,
  setpriv: string | null = null,
  dnsCatcher = false,
): string {
  // Waiting is done by the shell's own builtins (no process per poll): a few milliseconds, at most ~5 s.
  // $2: the table (tcp, udp), $3: the state a bound socket is in there (listening; unconnected).
  const lines = [
    'set -e',
    'listening() { n=0; while :; do',
    '  while IFS= read -r l; do case "$l" in *" $1 00000000:0000 $3 "*) return 0;; esac; done < /proc/net/$2',
    '  n=$((n+1)); [ $n -lt 100000 ] || exit 97; done; }',
  ];
  // Killed when this shell (by then the confined sandbox's bwrap) ends, even when the worker was killed.
  const forwarder = setpriv ? `${setpriv} --pdeathsig KILL ${socat}` : socat;
  for (const r of routes) {
    lines.push(
      `${forwarder} TCP-LISTEN:${r.endpoint.port},bind=${r.address},fork,reuseaddr UNIX-CONNECT:${socketDir}/${r.socket} &`,
    );
  }
  // Every name the confined process looks up that the hosts file lacks is asked here, and told there
  // is no such name by the worker, which so learns what it tried to reach (DNS_SOCKET).
  if (dnsCatcher) {
    lines.push(`${forwarder} UDP4-RECVFROM:53,bind=127.0.0.1,fork UNIX-CONNECT:${socketDir}/${DNS_SOCKET} &`);
  }
  // Only the routes are waited for: a name the catcher would see is refused whether or not it is up yet (an
  // allowed name is in the hosts file), so a lookup in the first moments is merely not recorded.
  for (const r of routes) lines.push(`listening ${procNetTcpAddress(r.address, r.endpoint.port)} tcp 0A`);
  lines.push('exec "$@"');
  return `${lines.join('\n')}\n`;
}
