/**
 * `saga mcp`: the MCP server over stdio (src/client/mcp/server.ts). stdout carries the protocol alone: the
 * console is sent to stderr while it runs, and it ends when its client closes stdin.
 */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { str } from '../args';
import type { ParsedArgs } from '../command-decl';
import { UserError } from '../errors';
import type { Io } from '../io';
import { createSagaMcpServer } from '../mcp/server';

/** `mcp:<user>`: --user, else the login name. */
export function mcpUser(given: string | undefined): string {
  const user = given ?? process.env.USER ?? os.userInfo().username;
  if (!/^[\w.@+-]{1,64}$/.test(user))
    throw new UserError(`saga mcp: --user '${user}': use 1-64 letters, digits and . _ @ + -`);
  return `mcp:${user}`;
}

/** Anything a library prints with console.log would corrupt the protocol on stdout. */
function consoleToStderr(): void {
  const toErr = (...parts: unknown[]) => console.error(...parts);
  console.log = toErr;
  console.info = toErr;
  console.debug = toErr;
}

export async function mcpCommand(args: ParsedArgs, io: Io, connect: () => Promise<Client>): Promise<number> {
  const user = mcpUser(str(args, 'user'));
  consoleToStderr();
  const server = createSagaMcpServer({ connect, user, log: io.err });
  const transport = new StdioServerTransport();
  // The transport does not watch for the end of stdin: the client closing it ends the server.
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  io.err(`saga mcp: serving over stdio, answers recorded as ${user}`);
  await ended;
  await server.close().catch(() => undefined);
  return 0;
}
