/**
 * Scripted stand-ins of the model APIs that the real agent CLIs call (no internet here). Each stand-in
 * (anthropic.ts, openai-responses.ts, gemini.ts, openai-chat.ts) serves one wire protocol on 127.0.0.1 and
 * plays the same script: one tool call per step, in order, each sent after the CLI has returned the result
 * of the previous one; then a final text answer. The step a request is at is read from the conversation the
 * CLI sends (how many tool results it carries), so the stand-in keeps no per-session state and a CLI that
 * retries a request gets the same answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptStep =
  /** The CLI's own file-writing tool (Write / apply_patch / write_file / write). Path relative to cwd. */
  | { kind: 'write'; path: string; content: string }
  /** The CLI's own shell tool (Bash / exec_command / run_shell_command / bash). */
  | { kind: 'shell'; command: string };

export interface ModelScript {
  steps: ScriptStep[];
  /** The final assistant text once every step's result is in. */
  finalText: string;
  /** Tokens reported per response (defaults: 1000 in, 100 out, 0 cached). */
  usage?: { input: number; output: number; cached?: number };
  /** Answer every model request with this failure instead of playing the script. */
  fail?: 'auth' | 'model-not-found';
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** The body's bytes as received (a git pack is not text). */
  raw: Buffer;
}

export interface StandIn {
  /** Base URL, e.g. http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  /** Every request received, in order (model calls and anything else the CLI asked for). */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export type Handler = (req: RecordedRequest, res: http.ServerResponse) => void | Promise<void>;

/** An HTTP server on 127.0.0.1 with a random port that records each request's JSON body. */
export async function startRecordingServer(handler: Handler): Promise<StandIn> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, raw };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err) }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Server-sent events: `event:` lines are written only when a name is given. */
export function writeSse(res: http.ServerResponse, events: Array<{ event?: string; data: unknown }>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) {
    if (event) res.write(`event: ${event}\n`);
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

export const scriptUsage = (script: ModelScript) => ({
  input: script.usage?.input ?? 1000,
  output: script.usage?.output ?? 100,
  cached: script.usage?.cached ?? 0,
});
