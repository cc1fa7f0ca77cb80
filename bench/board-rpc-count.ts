/**
 * Preloaded into `bin/saga board` by `npm run bench:board` (`node -r dist/bench/board-rpc-count.js`): counts
 * the Temporal calls the process makes, from outside the board's code. Every gRPC call is one HTTP/2 stream
 * (grpc-js opens its sessions with node's `http2.connect`, also from the dist/cli.js bundle), counted by its
 * method (`QueryWorkflow`, `DescribeWorkflowExecution`, `ListWorkflowExecutions`...). The bench asks for
 * the counts over the IPC channel it started the process with: message 'rpc-counts' → {type, calls}.
 */
import http2 from 'node:http2';

export interface RpcCounts {
  type: 'rpc-counts';
  /** gRPC method → calls started since the process started. */
  calls: Record<string, number>;
}

const calls: Record<string, number> = {};

type Connect = (...args: unknown[]) => http2.ClientHttp2Session;
type Request = (headers?: http2.OutgoingHttpHeaders, ...rest: unknown[]) => http2.ClientHttp2Stream;

const connect = http2.connect as unknown as Connect;
(http2 as unknown as { connect: Connect }).connect = function (this: unknown, ...args: unknown[]) {
  const session = connect.apply(this, args);
  const request = session.request.bind(session) as Request;
  (session as unknown as { request: Request }).request = (headers, ...rest) => {
    const method = String(headers?.[':path'] ?? '?')
      .split('/')
      .pop()!;
    calls[method] = (calls[method] ?? 0) + 1;
    return request(headers, ...rest);
  };
  return session;
};

if (process.send) {
  process.on('message', (message) => {
    if (message === 'rpc-counts') process.send?.({ type: 'rpc-counts', calls: { ...calls } } as RpcCounts);
  });
  // The channel must not keep the board running once it was told to stop.
  process.channel?.unref();
}
