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
import { isInternalAddress } from './addresses';
import { dnsNameErrorReply, dnsQuestionName } from './dns-packet';
import type { Endpoint } from '../../domain/config/sandbox';
import {
  CATCHER_RESOLV_CONF,
  DNS_SOCKET,
  hostsFile,
  networkEntryScript,
  type NetworkRoute,
} from './network-routes';

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

/** A name the confined process looked up that the allow-list does not have. */
export class NameRefusedError extends EndpointRefusedError {
  override name = 'NameRefusedError';
  constructor(readonly host: string) {
    super(`${host} is not in the sandbox's network allow-list`);
  }
}

/** What the bridge tells its run besides refusals: a connection through an allowed route that was made. */
export interface BridgeOptions {
  /** Catch the sandbox's name lookups (DNS_SOCKET): each is a refusal naming the host. */
  dnsCatcher?: boolean;
  onConnected?: () => void;
}

export async function startNetworkBridge(
  routes: readonly NetworkRoute[],
  socat: string,
  onRefused: (err: Error) => void = () => undefined,
  setpriv: string | null = null,
  options: BridgeOptions = {},
) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-net-'));
  const hosts = path.join(dir, 'hosts');
  await fs.writeFile(hosts, hostsFile(routes));
  const dnsCatcher = options.dnsCatcher ?? false;
  await fs.writeFile(path.join(dir, 'entry.sh'), networkEntryScript(routes, socat, dir, setpriv, dnsCatcher));
  const servers: net.Server[] = [];
  if (dnsCatcher) {
    await fs.writeFile(path.join(dir, 'resolv.conf'), CATCHER_RESOLV_CONF);
    servers.push(await listen(path.join(dir, DNS_SOCKET), catchLookup(onRefused)));
  }
  for (const route of routes) {
    const server = net.createServer((inbound) => {
      inbound.pause();
      inbound.on('error', () => inbound.destroy());
      checkedAddress(route.endpoint).then(
        (host) => {
          if (inbound.destroyed) return;
          const outbound = net.connect({ host, port: route.endpoint.port });
          let connected = false;
          outbound.once('connect', () => {
            connected = true;
            options.onConnected?.();
          });
          inbound.pipe(outbound).pipe(inbound);
          inbound.resume();
          const end = () => {
            inbound.destroy();
            outbound.destroy();
          };
          inbound.on('close', end);
          outbound.on('close', end).on('error', (err: NodeJS.ErrnoException) => {
            // An allowed endpoint that cannot be reached (nothing listens, no route) is why a run hangs.
            if (!connected) onRefused(unreachableError(route.endpoint, err));
            end();
          });
        },
        (err: Error) => {
          onRefused(err instanceof EndpointRefusedError ? err : unreachableError(route.endpoint, err));
          inbound.destroy();
        },
      );
    });
    await listen(path.join(dir, route.socket), server);
    servers.push(server);
  }
  return {
    dir,
    hosts,
    resolv: dnsCatcher ? path.join(dir, 'resolv.conf') : null,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

const unreachableError = (endpoint: Endpoint, err: NodeJS.ErrnoException) =>
  new EndpointRefusedError(
    `${endpoint.host}:${endpoint.port} cannot be reached from this machine (${err.code ?? err.message})`,
  );

async function listen(socket: string, server: net.Server): Promise<net.Server> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return server;
}

/** One looked-up name per connection (socat forwards each datagram on its own): refused, answered "no such name". */
function catchLookup(onRefused: (err: Error) => void): net.Server {
  return net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.once('data', (query: Buffer) => {
      const host = dnsQuestionName(query);
      if (host) onRefused(new NameRefusedError(host));
      if (host) socket.end(dnsNameErrorReply(query));
      else socket.end();
    });
  });
}
