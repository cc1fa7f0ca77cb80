/**
 * The worker's end of a sandbox's allowed endpoints: a Unix socket per route, in a folder only the
 * network sandbox's forwarders see (with its /etc/hosts and entry script), each connection forwarded to
 * the route's real host and port and nowhere else. A host name is resolved here, per connection, and the
 * connection goes to the address checked: one that is loopback, private or link-local (the cloud metadata
 * service) is refused unless the entry named this machine itself (`127.0.0.1`, `localhost`).
 */
import { promises as dns } from 'node:dns';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isInternalAddress } from '../../domain/config/addresses';
import { hostsFile, networkEntryScript, type Endpoint, type NetworkRoute } from '../../domain/config/sandbox';

/** Why an allowed endpoint's connection was refused (to the worker's log; the sandbox sees a closed
 * connection). */
export class EndpointRefusedError extends Error {
  override name = 'EndpointRefusedError';
}

const LITERAL_LOCAL = new Set(['127.0.0.1', 'localhost']);

/**
 * The address to connect to for `endpoint`: the loopback address for an entry that names this machine,
 * else the first address its name resolves to, refused when any is internal (a name that answers with an
 * internal address among public ones is not trusted either).
 */
export async function checkedAddress(
  endpoint: Endpoint,
  lookup: (host: string) => Promise<{ address: string }[]> = (host) => dns.lookup(host, { all: true }),
): Promise<string> {
  if (LITERAL_LOCAL.has(endpoint.host)) return '127.0.0.1';
  const addresses = await lookup(endpoint.host);
  const internal = addresses.find((a) => isInternalAddress(a.address));
  if (addresses.length === 0 || internal) {
    throw new EndpointRefusedError(
      `${endpoint.host}:${endpoint.port} resolves to ${internal?.address ?? 'nothing'}, an address of ` +
        'this machine or its private network; name it literally (127.0.0.1:PORT) if that is meant',
    );
  }
  return addresses[0]!.address;
}

export async function startNetworkBridge(
  routes: readonly NetworkRoute[],
  socat: string,
  onRefused: (err: Error) => void = () => undefined,
  setpriv: string | null = null,
) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-net-'));
  const hosts = path.join(dir, 'hosts');
  await fs.writeFile(hosts, hostsFile(routes));
  await fs.writeFile(path.join(dir, 'entry.sh'), networkEntryScript(routes, socat, dir, setpriv));
  const servers: net.Server[] = [];
  for (const route of routes) {
    const server = net.createServer((inbound) => {
      inbound.pause();
      inbound.on('error', () => inbound.destroy());
      checkedAddress(route.endpoint).then(
        (host) => {
          if (inbound.destroyed) return;
          const outbound = net.connect({ host, port: route.endpoint.port });
          inbound.pipe(outbound).pipe(inbound);
          inbound.resume();
          const end = () => {
            inbound.destroy();
            outbound.destroy();
          };
          inbound.on('close', end);
          outbound.on('error', end).on('close', end);
        },
        (err: Error) => {
          onRefused(err);
          inbound.destroy();
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path.join(dir, route.socket), () => resolve());
    });
    servers.push(server);
  }
  return {
    dir,
    hosts,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
