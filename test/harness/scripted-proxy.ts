/**
 * A real HTTP proxy in front of a tracker (the test Gitea) whose first answers are scripted: each queued
 * answer (a status and headers, e.g. 429 with `Retry-After: 1`, then 503) is given to the next request
 * instead of forwarding it; once the queue is empty every request passes through unchanged. It records
 * when each request arrived, so a test can measure the waits a client left between its calls.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ScriptedProxy {
  url: string;
  /** Each request: `METHOD path`, when it arrived (ms since the epoch), and whether it was scripted. */
  seen: { call: string; at: number; scripted: number | null }[];
  /** Queues answers for the next requests. */
  script(...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

export async function startScriptedProxy(upstream: string): Promise<ScriptedProxy> {
  const to = new URL(upstream);
  const queue: ScriptedAnswer[] = [];
  const seen: ScriptedProxy['seen'] = [];
  const server = http.createServer((req, res) => {
    const answer = queue.shift();
    seen.push({
      call: `${req.method ?? '?'} ${req.url ?? ''}`,
      at: Date.now(),
      scripted: answer?.status ?? null,
    });
    if (answer) {
      req.resume();
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body ?? { message: `scripted ${answer.status}` }));
      return;
    }
    const forwarded = http.request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    script: (...answers) => queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
