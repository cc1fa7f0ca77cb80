/**
 * A real HTTP proxy in front of a forge that records every request it passes on (method and path), so a
 * test can count the API calls an adapter makes against the REAL server (Gitea keeps no request log a
 * test could read). Requests and answers pass through unchanged, headers included.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** `http://127.0.0.1:PORT`: use it as the forge's url. */
  url: string;
  /** `METHOD /path?query` of each request, in order. */
  calls: string[];
  close(): Promise<void>;
}

export async function countingProxy(upstream: string): Promise<CountingProxy> {
  const calls: string[] = [];
  const to = new URL(upstream);
  const server = http.createServer((req, res) => {
    calls.push(`${req.method ?? '?'} ${req.url ?? ''}`);
    const forwarded = http.request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', (error) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${error.message}`);
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
