/**
 * The `saga` command line: commands and options are declared once (declarations.ts) and parsed by commander
 * (args.ts), which also generates `--help`, `--version` and shell completion. Each command's module is
 * loaded only when its command runs, so `saga flags ...` does not pay for the Temporal client and
 * `saga status` does not pay for the worker runtime (every CLI call used to load everything: ~0.6 s).
 */
import type { Client } from '@temporalio/client';
import type { Io } from './commands/server';
import { EnvironmentError, EXIT, UserError } from './errors';

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
  codec: async () => (await import('./commands/codec')).codecCommand,
  continue: async () => withRuntime((await import('./commands/continue')).continueCommand),
  demo: async () => withRuntime((await import('./commands/demo')).demoCommand),
  doctor: async () => (await import('./commands/doctor')).doctorCommand,
  completion: async () => completionCommand,
};

async function completionCommand(argv: string[], io: Io): Promise<number> {
  const { bashCompletion, zshCompletion } = await import('./completion');
  io.out((argv[0] === 'zsh' ? zshCompletion() : bashCompletion()).trimEnd());
  return EXIT.ok;
}

const HELP = ['--help', '-h', 'help'];
const FLAGS_SUBCOMMANDS = ['parse', 'classify', 'check'];

/** `saga flags` parses its own arguments (DESIGN.md 4.2); only its help is taken from the declarations. */
function flagsHelpRequest(rest: string[]): string[] | null {
  if (rest.length === 1 && HELP.includes(rest[0]!)) return ['flags', '--help'];
  if (rest.length === 2 && FLAGS_SUBCOMMANDS.includes(rest[0]!) && HELP.includes(rest[1]!))
    return ['flags', rest[0]!, '--help'];
  return null;
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  const flagsHelp = name === 'flags' ? flagsHelpRequest(rest) : null;
  if (name !== 'flags' || flagsHelp) {
    const { parseCommandLine } = await import('./args');
    const parsed = parseCommandLine(flagsHelp ?? argv);
    if (parsed.kind === 'output') {
      io.out(parsed.text);
      return parsed.code;
    }
    if (parsed.kind === 'error') {
      io.err(parsed.message);
      return EXIT.user;
    }
  }
  const load = COMMANDS[name!]!;
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
    // By name: the codec module (and the Temporal protos it loads) stays out of commands that never use it.
    if (error instanceof Error && error.name === 'CodecError') {
      io.err(error.message);
      return EXIT.environment;
    }
    if (error instanceof Error && /Unknown encoding: binary\/encrypted/.test(error.message)) {
      io.err(
        `${error.message}: the saga's payloads are encrypted. Set SAGA_CODEC_KEY or SAGA_CODEC_KEY_FILE to the key its workers use.`,
      );
      return EXIT.environment;
    }
    throw error;
  } finally {
    await client?.connection.close().catch(() => undefined);
  }
}
