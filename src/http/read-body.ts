/** Reading a request body with a size limit, for saga's small HTTP servers (chat bridge, codec endpoint). */
import type http from 'node:http';

/** How much more of an oversized body is read (and dropped) so the client gets the 413, not a reset. */
const DRAIN_BYTES = 1024 * 1024;

/** The body as UTF-8, or null when it is over `maxBytes`; past `maxBytes` + 1 MiB the connection is dropped. */
export function readBody(req: http.IncomingMessage, maxBytes: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else if (size > maxBytes + DRAIN_BYTES) {
        resolve(null);
        req.destroy();
      }
    });
    req.on('end', () => resolve(size > maxBytes ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
