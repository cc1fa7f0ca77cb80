/**
 * A local HTTP server that records every request (path, headers, raw body) and answers with `reply`:
 * the stand-in for Slack's Web API and for a SAGA_NOTIFY_URL receiver in the chat bridge tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** What the recorder answered. */
  reply?: unknown;
}

export interface HttpRecorder {
  url: string;
  requests: RecordedRequest[];
  /** Resolves with the first recorded request matching `predicate` (waiting for it if needed). */
  waitFor(predicate: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export async function startHttpRecorder(reply: (r: RecordedRequest) => unknown): Promise<HttpRecorder> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        path: req.url ?? '/',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
      };
      recorded.reply = reply(recorded);
      requests.push(recorded);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(recorded.reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = requests.find(predicate);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `No matching request; recorded: ${requests.map((r) => r.path).join(', ') || 'none'}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
