/** `saga board`: the saga board, a local web page of every saga that also answers their questions (issue 32). */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { parseArgs, port, str, type ParsedArgs } from '../args';
import { startBoardServer, DEFAULT_BOARD_PORT, type BoardServer } from '../board/server';
import { newBoardToken } from '../board/auth';
import { connectionSettings, uiUrlFor } from '../connection';
import { UserError } from '../errors';
import type { Io } from './server';
import { untilStopped } from '../until-stopped';

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

export interface BoardSettings {
  host: string;
  port: number;
  /** Null: a random token, printed at start. */
  token: string | null;
  user: string;
}

/**
 * The board's options, checked before anything connects (bad input is a user error whatever the server's
 * state); `prefix` is `board-` for `saga dev`, which takes them as `--board-port` etc.
 */
export function boardSettings(args: ParsedArgs, command: string, prefix = ''): BoardSettings {
  const host = str(args, `${prefix}host`) ?? '127.0.0.1';
  const given = str(args, `${prefix}token`) ?? process.env.SAGA_BOARD_TOKEN;
  if (given !== undefined && given.trim().length < 16)
    throw new UserError(
      `saga ${command}: the token (--${prefix}token or SAGA_BOARD_TOKEN) needs at least 16 characters.`,
    );
  const user = str(args, `${prefix}user`) ?? process.env.USER ?? os.userInfo().username;
  if (!/^[\w.@-]{1,64}$/.test(user))
    throw new UserError(
      `saga ${command}: --${prefix}user '${user}': letters, digits and . _ @ - only (at most 64).`,
    );
  const listenPort = port(args, `${prefix}port`, command, { allowZero: true }) ?? DEFAULT_BOARD_PORT;
  return { host, port: listenPort, token: given?.trim() ?? null, user };
}

/** Starts the board on `client` and prints where it is and the token. */
export async function openBoard(
  client: Client,
  settings: BoardSettings,
  uiBaseUrl: string | null,
  io: Io,
): Promise<BoardServer> {
  const { host } = settings;
  const token = settings.token ?? newBoardToken();
  const board = await startBoardServer({
    client,
    token,
    user: settings.user,
    ui: { uiBaseUrl, namespace: client.options.namespace },
    host,
    port: settings.port,
    log: (line) => io.err(line),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EADDRNOTAVAIL' || error.code === 'EACCES')
      throw new UserError(`saga board: cannot listen on ${host}: ${error.message}`);
    throw error;
  });
  io.out(`Saga board: ${board.url}/`);
  io.out(
    settings.token === null
      ? `Token for answering (paste it in the page once): ${token}`
      : 'Token: as configured.',
  );
  if (!LOOPBACK.includes(host))
    io.err(
      `saga board: listening on ${host}: anyone who reaches it sees every saga (answers need the token).`,
    );
  return board;
}

export async function boardCommand(argv: string[], io: Io, connect: () => Promise<Client>): Promise<number> {
  const settings = boardSettings(parseArgs('board', argv), 'board');
  const client = await connect();
  const board = await openBoard(client, settings, uiUrlFor(connectionSettings().address), io);
  return untilStopped(io.out, 'saga board', () => board.close());
}
