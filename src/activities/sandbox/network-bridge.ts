/**
 * The worker's end of a sandbox's allowed endpoints: a Unix socket per route, in a folder bound into the
 * sandbox (with its /etc/hosts and entry script), each connection forwarded to the route's real host and
 * port and nowhere else.
 */
import { promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { hostsFile, networkEntryScript, type NetworkRoute } from '../../domain/config/sandbox';

export async function startNetworkBridge(routes: readonly NetworkRoute[], socat: string) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-net-'));
  const hosts = path.join(dir, 'hosts');
  await fs.writeFile(hosts, hostsFile(routes));
  await fs.writeFile(path.join(dir, 'entry.sh'), networkEntryScript(routes, socat));
  const servers: net.Server[] = [];
  for (const route of routes) {
    const server = net.createServer((inbound) => {
      const outbound = net.connect({ host: route.endpoint.host, port: route.endpoint.port });
      inbound.pipe(outbound).pipe(inbound);
      const end = () => {
        inbound.destroy();
        outbound.destroy();
      };
      inbound.on('error', end).on('close', end);
      outbound.on('error', end).on('close', end);
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
