/** `saga board`: the saga board, a local web page of every saga that also answers their questions (issue 32). */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { parseArgs, port, str } from '../args';
import { startBoardServer, DEFAULT_BOARD_PORT } from '../board/server';
import { newBoardToken } from '../board/auth';
import { connectionSettings, uiUrlFor } from '../connection';
import { UserError } from '../errors';
import type { Io } from './server';

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

export async function boardCommand(argv: string[], io: Io, connect: () => Promise<Client>): Promise<number> {
  const args = parseArgs('board', argv);
  const host = str(args, 'host') ?? '127.0.0.1';
  const given = str(args, 'token') ?? process.env.SAGA_BOARD_TOKEN;
  if (given !== undefined && given.trim().length < 16)
    throw new UserError('saga board: the token (--token or SAGA_BOARD_TOKEN) needs at least 16 characters.');
  const token = given?.trim() ?? newBoardToken();
  const user = str(args, 'user') ?? process.env.USER ?? os.userInfo().username;
  if (!/^[\w.@-]{1,64}$/.test(user))
    throw new UserError(`saga board: --user '${user}': letters, digits and . _ @ - only (at most 64).`);
  // Every argument is checked before connecting: bad input is a user error, whatever the server's state.
  const listenPort = port(args, 'port', 'board', { allowZero: true }) ?? DEFAULT_BOARD_PORT;
  const client = await connect();
  const board = await startBoardServer({
    client,
    token,
    user,
    ui: { uiBaseUrl: uiUrlFor(connectionSettings().address), namespace: client.options.namespace },
    host,
    port: listenPort,
    log: (line) => io.err(line),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EADDRNOTAVAIL' || error.code === 'EACCES')
      throw new UserError(`saga board: cannot listen on ${host}: ${error.message}`);
    throw error;
  });
  io.out(`Saga board: ${board.url}/`);
  io.out(
    given === undefined
      ? `Token for answering (paste it in the page once): ${token}`
      : 'Token: as configured.',
  );
  if (!LOOPBACK.includes(host))
    io.err(
      `saga board: listening on ${host}: anyone who reaches it sees every saga (answers need the token).`,
    );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  io.out('Stopping the saga board...');
  await board.close();
  return 0;
}
