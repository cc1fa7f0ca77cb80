/**
 * The `saga` command line: commands and options are declared once, with their handlers' loaders
 * (declarations.ts), and parsed here, once, by commander against that table (args.ts, which also generates
 * `--help` and `--version`; completion.ts the shell completion); the command's handler is given the parsed
 * arguments. Each command's module is loaded only when its command runs (every CLI call used to load
 * everything: ~0.6 s).
 */
import type { Client } from '@temporalio/client';
import type { CliParse } from './args';
import type { Io } from './io';
import { COMMAND_DECLS, findDecl } from './declarations';
import { EnvironmentError, EXIT, UserError } from './errors';

const HELP = ['--help', '-h', 'help'];
const FLAGS_SUBCOMMANDS = (findDecl('flags')?.subcommands ?? []).map((s) => s.name);

/** `saga flags` parses its own arguments (the slash-command grammar); only its help is taken from the declarations. */
function flagsHelpRequest(rest: string[]): string[] | null {
  if (rest.length === 1 && HELP.includes(rest[0]!)) return ['flags', '--help'];
  if (rest.length === 2 && FLAGS_SUBCOMMANDS.includes(rest[0]!) && HELP.includes(rest[1]!))
    return ['flags', rest[0]!, '--help'];
  return null;
}

/** The command line by the table: a command to run with its arguments, or what to print instead. */
async function parse(argv: string[]): Promise<CliParse> {
  const [name, ...rest] = argv;
  const flagsHelp = name === 'flags' ? flagsHelpRequest(rest) : null;
  if (name === 'flags' && !flagsHelp)
    return { kind: 'run', path: 'flags', args: { options: {}, positionals: rest } };
  const { parseCommandLine } = await import('./args');
  return parseCommandLine(COMMAND_DECLS, flagsHelp ?? argv);
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const parsed = await parse(argv);
  if (parsed.kind === 'output') {
    io.out(parsed.text);
    return parsed.code;
  }
  if (parsed.kind === 'error') {
    io.err(parsed.message);
    return EXIT.user;
  }
  const decl = COMMAND_DECLS.find((c) => c.name === parsed.path.split(' ')[0])!;
  let client: Client | undefined;
  const connect = async () => {
    client ??= (await (await import('./connection')).connectClient()).client;
    return client;
  };
  try {
    const command = await decl.load();
    // A worker's core runtime (and its log level) is installed before any native connection.
    if (decl.runtime) (await import('../worker/worker')).installRuntime();
    return await command(parsed.args, io, connect);
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
