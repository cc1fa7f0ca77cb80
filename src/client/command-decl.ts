/**
 * The shape of a `saga` command's declaration (declarations.ts), its usage line, and what the parser (args.ts)
 * makes of a command line: the arguments a command's handler is given.
 */
import type { Client } from '@temporalio/client';
import type { Io } from './io';

export interface OptionDecl {
  /** Long name without dashes, e.g. `allow-dirty`. */
  name: string;
  /** Placeholder of the option's value (`PATH`); absent for a boolean switch. */
  value?: string;
  /** May be given several times; the values are collected in order. */
  repeatable?: boolean;
  /** Must be given: commander refuses the command line without it; shown without brackets in the usage line. */
  required?: boolean;
  description: string;
}

export interface ArgDecl {
  name: string;
  optional?: boolean;
  /** Collects the remaining arguments (and everything after `--`). */
  variadic?: boolean;
  choices?: readonly string[];
}

export interface CommandDecl {
  name: string;
  summary: string;
  args?: readonly ArgDecl[];
  options?: readonly OptionDecl[];
  subcommands?: readonly CommandDecl[];
  /** The command parses its own arguments (`saga flags`); declared here for help and completion. */
  ownGrammar?: boolean;
  /** Extra text printed after the options in `--help`. */
  notes?: string;
}

/** A command line parsed by its command's declaration (args.ts). */
export interface ParsedArgs {
  /** By long option name (`allow-dirty`): true for a switch, the value, or the values of a repeatable one. */
  options: Record<string, string | string[] | boolean | undefined>;
  /** The command's arguments, in order; a variadic one includes everything after `--`. */
  positionals: string[];
}

/**
 * A command's handler: its arguments, parsed by runCli (cli.ts) against its declaration (a command with
 * subcommands: the subcommand's; an `ownGrammar` one: every word after its name, as positionals), the output,
 * and the client (connected on first use).
 */
export type CommandHandler = (args: ParsedArgs, io: Io, connect: () => Promise<Client>) => Promise<number>;

/** A top-level command: how to load its handler, and whether it runs a worker. */
export interface TopCommandDecl extends CommandDecl {
  /** Imports the command's module when the command runs, and returns its handler. */
  load: () => Promise<CommandHandler>;
  /**
   * Runs a worker: the core runtime (and its log level) is installed before any native connection, and
   * bin/saga runs the command from dist/src/, as the native runtime is not in the bundle (scripts/bundle-cli.js).
   */
  runtime?: boolean;
}

/** `saga status NAME [--json] [--watch]`: one line (variadic arguments last, after `--`). */
export function usageLine(path: string, decl: CommandDecl): string {
  const words = [`saga ${path}`];
  if (decl.subcommands?.length) words.push(decl.subcommands.map((s) => s.name).join('|'));
  const arg = (a: ArgDecl): string => {
    const text = a.choices ? a.choices.join('|') : a.name;
    return a.variadic ? `[--] ${text}...` : a.optional ? `[${text}]` : text;
  };
  const args = decl.args ?? [];
  words.push(...args.filter((a) => !a.variadic).map(arg));
  for (const o of decl.options ?? []) {
    const text = `--${o.name}${o.value ? ` ${o.value}` : ''}${o.repeatable ? ' ...' : ''}`;
    words.push(o.required ? text : `[${text}]`);
  }
  words.push(...args.filter((a) => a.variadic).map(arg));
  return words.join(' ');
}

/** The declaration of `saga <path>` in the table `decls`, e.g. `status` or `chat serve`. */
export function declAt(decls: readonly CommandDecl[], path: string): CommandDecl | undefined {
  let list: readonly CommandDecl[] | undefined = decls;
  let found: CommandDecl | undefined;
  for (const word of path.split(' ')) {
    found = list?.find((c) => c.name === word);
    if (!found) return undefined;
    list = found.subcommands;
  }
  return found;
}
