/**
 * Argument parsing for every `saga` command, on commander, from a table of declarations it is given (the one
 * in declarations.ts: cli.ts passes it, so this module imports no command). Unknown options and missing or
 * extra arguments are user errors naming the problem, followed by the command's usage line; `--help` and
 * `--version` are generated from the same declarations.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Argument, Command, CommanderError, Option } from 'commander';
import { declAt, usageLine, type CommandDecl, type ParsedArgs } from './command-decl';
import { EXIT_CODES_NOTE, UserError } from './errors';

export type CliParse =
  | { kind: 'run'; path: string; args: ParsedArgs }
  | { kind: 'output'; text: string; code: 0 | 1 }
  | { kind: 'error'; message: string };

/** The package version, from the package.json above this file (src/ when run by tests, dist/src/ when built). */
export function packageVersion(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'saga-on-temporal' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

interface Built {
  program: Command;
  /** Set by the action of the command that ran. */
  ran?: { path: string; command: Command; decl: CommandDecl };
  out: string[];
}

function addDecl(parent: Command, decl: CommandDecl, prefix: string, built: Built): void {
  const pathName = prefix ? `${prefix} ${decl.name}` : decl.name;
  const cmd = parent.command(decl.name).summary(decl.summary).description(decl.summary);
  const usage = usageLine(pathName, decl).slice(`saga ${pathName} `.length);
  if (usage) cmd.usage(usage);
  for (const a of decl.args ?? []) {
    const arg = new Argument(
      a.optional ? `[${a.name}${a.variadic ? '...' : ''}]` : `<${a.name}${a.variadic ? '...' : ''}>`,
    );
    if (a.choices) arg.choices(a.choices);
    cmd.addArgument(arg);
  }
  for (const o of decl.options ?? []) {
    const option = new Option(`--${o.name}${o.value ? ` <${o.value}>` : ''}`, o.description);
    if (o.repeatable)
      option.argParser((value: string, previous: unknown) => [...((previous as string[]) ?? []), value]);
    if (o.required) option.makeOptionMandatory();
    cmd.addOption(option);
  }
  if (decl.notes) cmd.addHelpText('after', `\n${decl.notes}`);
  if (decl.subcommands?.length) {
    for (const sub of decl.subcommands) addDecl(cmd, sub, pathName, built);
    // A command with subcommands prints its help when given none (commander's default).
  } else {
    cmd.action((...actionArgs: unknown[]) => {
      built.ran = { path: pathName, command: actionArgs[actionArgs.length - 1] as Command, decl };
    });
  }
}

/** The whole `saga` program, built from the declarations; nothing in it exits the process or prints. */
export function buildProgram(decls: readonly CommandDecl[]): Built {
  const built: Built = { program: new Command('saga'), out: [] };
  const program = built.program
    .description('saga — deliver a feature with a fleet of coding agents, as a durable saga on Temporal')
    .usage('COMMAND [options]')
    .version(packageVersion(), '-V, --version', 'print the saga version')
    .helpCommand('help [COMMAND]', 'help for a command')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => built.out.push(s),
      writeErr: (s) => built.out.push(s),
      outputError: () => undefined,
    })
    .configureHelp({ subcommandTerm: (c) => c.name() })
    .addHelpText('after', `\nRun 'saga COMMAND --help' for a command's options.\n${EXIT_CODES_NOTE}`);
  for (const decl of decls) addDecl(program, decl, '', built);
  return built;
}

function commanderMessage(error: CommanderError): string {
  return error.message
    .replace(/^error: /, '')
    .replace(/\n/g, ' ')
    .trim();
}

/** Parses a whole `saga ...` command line (after `saga`) against the table of declarations `decls`. */
export function parseCommandLine(decls: readonly CommandDecl[], argv: string[]): CliParse {
  const built = buildProgram(decls);
  try {
    built.program.parse(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0 || error.code === 'commander.help')
      return { kind: 'output', text: built.out.join('').trimEnd(), code: error.exitCode === 0 ? 0 : 1 };
    // Which command failed: the deepest declared command named by the leading words.
    const words: string[] = [];
    for (const word of argv) {
      if (!declAt(decls, [...words, word].join(' '))) break;
      words.push(word);
    }
    const decl = words.length ? declAt(decls, words.join(' ')) : undefined;
    if (!decl)
      return {
        kind: 'error',
        message: `saga: ${commanderMessage(error)}.\n\nUsage: saga COMMAND [options] (saga --help lists them)`,
      };
    const where = words.join(' ');
    return {
      kind: 'error',
      message: `saga ${where}: ${commanderMessage(error)}.\nUsage: ${usageLine(where, decl)} (saga ${where} --help)`,
    };
  }
  if (!built.ran) {
    // `saga` alone, or a command with subcommands given none: its help, as a usage error.
    return {
      kind: 'output',
      text: built.out.join('').trimEnd() || built.program.helpInformation().trimEnd(),
      code: 1,
    };
  }
  const { path: ranPath, command, decl } = built.ran;
  const options: ParsedArgs['options'] = {};
  for (const o of decl.options ?? []) {
    // Commander keeps a `--no-X` switch as X = false (true by default); here it reads as `no-X`: true when given.
    const negated = o.name.startsWith('no-') && !o.value;
    const value = negated
      ? command.getOptionValue(camel(o.name.slice(3))) === false || undefined
      : (command.getOptionValue(camel(o.name)) as string | string[] | boolean | undefined);
    if (value !== undefined) options[o.name] = value;
  }
  const positionals = (command.processedArgs as (string | string[] | undefined)[]).flatMap((v) =>
    v === undefined ? [] : Array.isArray(v) ? v : [v],
  );
  return { kind: 'run', path: ranPath, args: { options, positionals } };
}

const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The parsed arguments of `saga <command> ...argv` by the table `decls`; a usage problem is a UserError. */
export function parseArgs(decls: readonly CommandDecl[], command: string, argv: string[]): ParsedArgs {
  const result = parseCommandLine(decls, [...command.split(' '), ...argv]);
  if (result.kind === 'run') return result.args;
  if (result.kind === 'error') throw new UserError(result.message);
  throw new UserError(result.text);
}

export const str = (args: ParsedArgs, name: string): string | undefined =>
  args.options[name] as string | undefined;
export const strs = (args: ParsedArgs, name: string): string[] =>
  (args.options[name] as string[] | undefined) ?? [];
export const bool = (args: ParsedArgs, name: string): boolean => args.options[name] === true;

/** A TCP port option (`--port 8888`); 0 (any free port) only where `allowZero`. A bad one is a UserError. */
export function port(
  args: ParsedArgs,
  name: string,
  command: string,
  { allowZero = false }: { allowZero?: boolean } = {},
): number | undefined {
  const text = str(args, name);
  if (text === undefined) return undefined;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(value >= (allowZero ? 0 : 1) && value <= 65535))
    throw new UserError(
      `saga ${command}: --${name} '${text}' is not a port: expected a whole number from ${allowZero ? 0 : 1} to 65535.`,
    );
  return value;
}
