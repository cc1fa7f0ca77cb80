/** `saga board`: the saga board, a local web page of every saga that also answers their questions. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { port, str, strs } from '../args';
import type { ParsedArgs } from '../command-decl';
import { startBoardServer, DEFAULT_BOARD_PORT, type BoardServer } from '../board/server';
import { newBoardToken } from '../board/auth';
import { connectionSettings, uiUrlFor } from '../connection';
import { UserError } from '../errors';
import type { Io } from '../io';
import { untilStopped } from '../until-stopped';

const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

export interface BoardSettings {
  host: string;
  port: number;
  /** Null: a random token, printed at start. */
  token: string | null;
  user: string;
  /** `--repo PATH` (repeatable): repositories the new-saga form offers, checked to be folders. */
  repos: string[];
  /** Printed at start: the token was given where other users can read it. */
  warning?: string;
}

/**
 * The board's options, checked before anything connects (bad input is a user error whatever the server's
 * state); `prefix` is `board-` for `saga dev`, which takes them as `--board-port` etc.
 */
export function boardSettings(args: ParsedArgs, command: string, prefix = ''): BoardSettings {
  const host = str(args, `${prefix}host`) ?? '127.0.0.1';
  const given = boardToken(args, command, prefix);
  if (given !== undefined && given.trim().length < 16)
    throw new UserError(
      `saga ${command}: the token (--${prefix}token-file, SAGA_BOARD_TOKEN or --${prefix}token) needs at least 16 characters.`,
    );
  const user = str(args, `${prefix}user`) ?? process.env.USER ?? os.userInfo().username;
  if (!/^[\w.@-]{1,64}$/.test(user))
    throw new UserError(
      `saga ${command}: --${prefix}user '${user}': letters, digits and . _ @ - only (at most 64).`,
    );
  const listenPort = port(args, `${prefix}port`, command, { allowZero: true }) ?? DEFAULT_BOARD_PORT;
  const onArgv = str(args, `${prefix}token`) !== undefined;
  return {
    host,
    port: listenPort,
    token: given?.trim() ?? null,
    user,
    repos: boardRepos(args, command, prefix),
    ...(onArgv
      ? {
          warning:
            `saga ${command}: --${prefix}token is on the command line, which every user of this machine can read ` +
            `(ps); give it as SAGA_BOARD_TOKEN or --${prefix}token-file instead.`,
        }
      : {}),
  };
}

/** `--repo PATH`s as absolute paths; one that is not a folder is refused before anything starts. */
function boardRepos(args: ParsedArgs, command: string, prefix: string): string[] {
  return strs(args, `${prefix}repo`).map((given) => {
    const repo = path.resolve(given);
    if (!existsSync(repo) || !statSync(repo).isDirectory())
      throw new UserError(`saga ${command}: --${prefix}repo ${given}: no such folder.`);
    return repo;
  });
}

/** The token from --token-file, SAGA_BOARD_TOKEN or --token (one of them); undefined: none given. */
function boardToken(args: ParsedArgs, command: string, prefix: string): string | undefined {
  const file = str(args, `${prefix}token-file`);
  const inline = str(args, `${prefix}token`);
  if (file !== undefined && inline !== undefined)
    throw new UserError(`saga ${command}: give --${prefix}token-file or --${prefix}token, not both.`);
  if (file === undefined) return inline ?? process.env.SAGA_BOARD_TOKEN;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(
      `saga ${command}: --${prefix}token-file ${file}: cannot read it (${(error as Error).message}).`,
    );
  }
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
    repos: settings.repos,
    ui: { uiBaseUrl, namespace: client.options.namespace },
    host,
    port: settings.port,
    log: (line) => io.err(line),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EADDRNOTAVAIL' || error.code === 'EACCES')
      throw new UserError(`saga board: cannot listen on ${host}: ${error.message}`);
    throw error;
  });
  if (settings.warning) io.err(settings.warning);
  io.out(`Saga board: ${board.url}/`);
  io.out(
    settings.token === null
      ? `Board token (reads and answers need it; the page asks for it once): ${token}\n` +
          `Open the board with it: ${board.url}/?token=${token}`
      : `Board token: as configured; open the board with it: ${board.url}/?token=<token>`,
  );
  if (!LOOPBACK.includes(host))
    io.err(
      `saga board: listening on ${host}: anyone who reaches it and has the token sees every saga and can answer.`,
    );
  return board;
}

export async function boardCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const settings = boardSettings(args, 'board');
  const client = await connect();
  const board = await openBoard(client, settings, uiUrlFor(connectionSettings().address), io);
  return untilStopped(io.out, 'saga board', () => board.close());
}
