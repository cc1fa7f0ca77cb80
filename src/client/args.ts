/** A small, strict argument parser: unknown options are errors that name the option. */
import { UserError } from './errors';

export type OptionKind = 'boolean' | 'string' | 'strings';
export interface ArgSpec {
  options: Record<string, OptionKind>;
  /** Names of positional arguments, for messages; `...rest` collects the remainder. */
  positionals: string[];
  minPositionals?: number;
}

export interface ParsedArgs {
  options: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
  /** Everything after a `--` separator, untouched. */
  rest: string[] | null;
}

export function parseArgs(command: string, argv: string[], spec: ArgSpec): ParsedArgs {
  const options: ParsedArgs['options'] = {};
  const positionals: string[] = [];
  let rest: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      const name = arg.slice(2, eq < 0 ? undefined : eq);
      const kind = spec.options[name];
      if (!kind) {
        const known = Object.keys(spec.options).map((o) => `--${o}`);
        throw new UserError(
          `saga ${command}: unknown option '--${name}'.${known.length ? ` Options: ${known.join(', ')}.` : ''}`,
        );
      }
      if (kind === 'boolean') {
        if (eq >= 0) throw new UserError(`saga ${command}: option '--${name}' takes no value.`);
        options[name] = true;
        continue;
      }
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UserError(`saga ${command}: option '--${name}' needs a value.`);
      if (kind === 'strings') options[name] = [...((options[name] as string[]) ?? []), value];
      else options[name] = value;
      continue;
    }
    positionals.push(arg);
  }
  const min =
    spec.minPositionals ?? spec.positionals.filter((p) => !p.startsWith('[') && !p.startsWith('...')).length;
  if (positionals.length < min) {
    throw new UserError(
      `saga ${command}: missing ${spec.positionals.slice(positionals.length, min).join(' ')}.`,
    );
  }
  const max = spec.positionals.some((p) => p.startsWith('...')) ? Infinity : spec.positionals.length;
  if (positionals.length > max) {
    throw new UserError(`saga ${command}: unexpected argument '${positionals[max]}'.`);
  }
  return { options, positionals, rest };
}

export const str = (args: ParsedArgs, name: string): string | undefined =>
  args.options[name] as string | undefined;
export const strs = (args: ParsedArgs, name: string): string[] =>
  (args.options[name] as string[] | undefined) ?? [];
export const bool = (args: ParsedArgs, name: string): boolean => args.options[name] === true;
