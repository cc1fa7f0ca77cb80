/** The `saga` command line: dispatches to one module per group of commands. */
import type { Client } from '@temporalio/client';
import { connectClient } from './connection';
import { EnvironmentError, EXIT, UserError } from './errors';
import { cleanupCommand } from './commands/cleanup';
import { flagsCommand } from './commands/flags';
import { listCommand, logsCommand, statusCommand } from './commands/inspect';
import {
  acceptCommand,
  approveCommand,
  cancelCommand,
  reportCommand,
  respondCommand,
  reviseCommand,
} from './commands/interact';
import { devCommand, workerCommand, type Io } from './commands/server';
import { startCommand } from './commands/start';
import { continueCommand } from './commands/continue';
import { demoCommand } from './commands/demo';

export const USAGE = `saga — deliver a feature with a fleet of coding agents, as a durable saga on Temporal

  saga dev                       embedded Temporal dev server (persistent, with Web UI) + worker
  saga worker [--host-id ID]     worker only (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY...)
  saga start --repo PATH [--plan FILE] [--agent PROFILE] [--config FILE] [--name SLUG] [--base BRANCH] [--wait]
             [--allow-dirty] [--skip-agent-check] -- ARGUMENTS
  saga status NAME [--json] [--watch]
  saga list [--json]
  saga respond NAME INTERACTION_ID CHOICE [--text TEXT]
  saga approve NAME | saga revise NAME --note TEXT | saga accept NAME [--fast-forward]
  saga report NAME --issue TEXT [--issue TEXT ...]
  saga continue [NAME]
  saga cancel NAME
  saga cleanup NAME [--repo PATH] [--force]
  saga logs NAME TASK_ID [--follow] [--raw]
  saga flags parse ARGUMENTS [--config-path PATH]
  saga flags classify --review-output TEXT
  saga flags check --review-output TEXT --iteration N [--history-json JSON]
  saga chat serve
  saga demo
  saga doctor [--repo PATH] [--config FILE] [--agent NAME [--probe]] [--json]

Exit codes: 0 success, 1 user error, 2 environment error (no server, no git).`;

type Command = (argv: string[], io: Io, connect: () => Promise<Client>) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  dev: (argv, io) => devCommand(argv, io),
  worker: (argv, io) => workerCommand(argv, io),
  start: startCommand,
  status: statusCommand,
  list: listCommand,
  logs: logsCommand,
  respond: respondCommand,
  approve: approveCommand,
  revise: reviseCommand,
  accept: acceptCommand,
  report: reportCommand,
  cancel: cancelCommand,
  cleanup: cleanupCommand,
  flags: (argv, io) => flagsCommand(argv, io),
  chat: async (argv, io, connect) => (await import('./commands/chat')).chatCommand(argv, io, connect),
  continue: continueCommand,
  demo: (argv, io) => demoCommand(argv, io),
  doctor: async (argv, io, connect) => (await import('./commands/doctor')).doctorCommand(argv, io, connect),
};

/** Registers commands from modules that are optional for the core (demo, chat, continue). */
export function registerCommand(name: string, command: Command): void {
  COMMANDS[name] = command;
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? EXIT.ok : EXIT.user;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`saga: unknown command '${name}'.\n\n${USAGE}`);
    return EXIT.user;
  }
  let client: Client | undefined;
  const connect = async () => {
    client ??= (await connectClient()).client;
    return client;
  };
  try {
    return await command(rest, io, connect);
  } catch (error) {
    if (error instanceof UserError) {
      io.err(error.message);
      return EXIT.user;
    }
    if (error instanceof EnvironmentError) {
      io.err(error.message);
      return EXIT.environment;
    }
    throw error;
  } finally {
    await client?.connection.close().catch(() => undefined);
  }
}
