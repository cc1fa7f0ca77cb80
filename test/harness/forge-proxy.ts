/**
 * A reverse proxy in front of the test Gitea (its API and git over HTTP alike), which can hold the next
 * request that matches, so a test can kill a worker at an exact point: e.g. after the push and before the
 * pull request is created (the create is held, never forwarded).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForgeProxy {
  /** `http://127.0.0.1:PORT`: use it as the forge url and in the git remote. */
  url: string;
  /** Resolves when a request matching `method` and `pathPattern` arrives; that request is held, not forwarded. */
  holdNext(method: string, pathPattern: RegExp): Promise<{ method: string; path: string }>;
  /** Requests seen so far, `METHOD path`. */
  seen: string[];
  close(): Promise<void>;
}

export async function startForgeProxy(upstream: string): Promise<ForgeProxy> {
  const target = new URL(upstream);
  const holds: { method: string; pattern: RegExp; arrived: (r: { method: string; path: string }) => void }[] =
    [];
  const held: http.ServerResponse[] = [];
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const reqPath = req.url ?? '/';
    seen.push(`${method} ${reqPath}`);
    const hold = holds.findIndex((h) => h.method === method && h.pattern.test(reqPath));
    if (hold !== -1) {
      const [h] = holds.splice(hold, 1);
      held.push(res);
      req.resume();
      h!.arrived({ method, path: reqPath });
      return;
    }
    const forward = http.request(
      {
        host: target.hostname,
        port: target.port,
        method,
        path: reqPath,
        headers: { ...req.headers, host: target.host },
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    holdNext: (method, pattern) => new Promise((arrived) => holds.push({ method, pattern, arrived })),
    close: async () => {
      held.forEach((res) => res.destroy());
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
