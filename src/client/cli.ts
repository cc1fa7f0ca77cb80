/**
 * The `saga` command line: dispatches to one module per group of commands. Each module is loaded only when
 * its command runs, so `saga flags ...` does not pay for the Temporal client and `saga status` does not pay
 * for the worker runtime (every CLI call used to load everything: ~0.6 s before the first line).
 */
import type { Client } from '@temporalio/client';
import type { Io } from './commands/server';
import { EnvironmentError, EXIT, UserError } from './errors';

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

/** Commands that run a worker install the core runtime (and its log level) before any native connection. */
async function withRuntime(command: Command): Promise<Command> {
  (await import('../worker/worker')).installRuntime();
  return command;
}

const COMMANDS: Record<string, () => Promise<Command>> = {
  dev: async () => withRuntime((await import('./commands/server')).devCommand),
  worker: async () => withRuntime((await import('./commands/server')).workerCommand),
  start: async () => (await import('./commands/start')).startCommand,
  status: async () => (await import('./commands/inspect')).statusCommand,
  list: async () => (await import('./commands/inspect')).listCommand,
  logs: async () => (await import('./commands/inspect')).logsCommand,
  respond: async () => (await import('./commands/interact')).respondCommand,
  approve: async () => (await import('./commands/interact')).approveCommand,
  revise: async () => (await import('./commands/interact')).reviseCommand,
  accept: async () => (await import('./commands/interact')).acceptCommand,
  report: async () => (await import('./commands/interact')).reportCommand,
  cancel: async () => (await import('./commands/interact')).cancelCommand,
  cleanup: async () => (await import('./commands/cleanup')).cleanupCommand,
  flags: async () => (await import('./commands/flags')).flagsCommand,
  chat: async () => (await import('./commands/chat')).chatCommand,
  continue: async () => withRuntime((await import('./commands/continue')).continueCommand),
  demo: async () => withRuntime((await import('./commands/demo')).demoCommand),
  doctor: async () => (await import('./commands/doctor')).doctorCommand,
};

export async function runCli(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? EXIT.ok : EXIT.user;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.err(`saga: unknown command '${name}'.\n\n${USAGE}`);
    return EXIT.user;
  }
  let client: Client | undefined;
  const connect = async () => {
    client ??= (await (await import('./connection')).connectClient()).client;
    return client;
  };
  try {
    const command = await load();
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
