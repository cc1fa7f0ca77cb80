import { parseFlags, toContractJson } from '../../domain/request/flags';
import {
  classifyReview,
  qualityDecision,
  ReviewHistorySchema,
  type IterationRecord,
} from '../../domain/fleet/review';
import { formatPath } from '../../domain/text/zod-errors';
import type { Io } from '../io';
import { loadSageConfigDefaults } from '../sage-config';

export const FLAGS_USAGE = [
  'Usage:',
  '  saga flags parse ARGUMENTS [--config-path PATH]',
  '  saga flags classify --review-output TEXT',
  '  saga flags check --review-output TEXT --iteration N [--history-json JSON]',
].join('\n');

/**
 * `saga flags ...`: the slash-command flag parser and review checks for scripts. `argv` is what follows `saga flags`.
 * Exit codes: 0 success; 1 parse error (JSON still printed), invalid check input, or usage error.
 */
export async function flagsCommand(argv: string[], io: Io): Promise<number> {
  const [subcommand, ...rest] = argv;
  switch (subcommand) {
    case 'parse':
      return parseCommand(rest, io);
    case 'classify':
      return classifyCommand(rest, io);
    case 'check':
      return checkCommand(rest, io);
    case '-h':
    case '--help':
    case 'help':
      io.out(FLAGS_USAGE);
      return 0;
    case undefined:
      return usageError(io, 'Missing subcommand: expected parse, classify or check.');
    default:
      return usageError(io, `Unknown subcommand '${subcommand}': expected parse, classify or check.`);
  }
}

function usageError(io: Io, message: string): number {
  io.err(`saga flags: ${message}`);
  io.err(FLAGS_USAGE);
  return 1;
}

/**
 * The payload is user text whose point is often a leading-dash flag, so no generic option parser
 * sees it: only our one option is split out, everything else (dashes and all) is the payload.
 */
function parseCommand(args: string[], io: Io): number {
  if (args.length === 1 && (args[0] === '-h' || args[0] === '--help')) {
    io.out(FLAGS_USAGE);
    return 0;
  }
  let configPath: string | undefined;
  let payload: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    if (token === '--config-path' && i + 1 < args.length) {
      configPath = args[++i];
    } else if (token.startsWith('--config-path=')) {
      configPath = token.slice('--config-path='.length);
    } else {
      payload.push(token);
    }
  }
  if (payload[0] === '--') payload = payload.slice(1);
  const result = parseFlags(payload.join(' '), loadSageConfigDefaults(configPath));
  io.out(toContractJson(result));
  return result.error === null ? 0 : 1;
}

type OptionValues = Map<string, string>;

/** `--name VALUE` or `--name=VALUE`; the value is taken verbatim, even when it starts with a dash. */
function readOptions(
  command: string,
  args: string[],
  allowed: readonly string[],
): { values: OptionValues } | { error: string } {
  const values: OptionValues = new Map();
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    const eq = token.indexOf('=');
    const name = token.startsWith('--') && eq !== -1 ? token.slice(0, eq) : token;
    if (!allowed.includes(name)) {
      return {
        error: `Unknown argument '${token}' for 'saga flags ${command}'; expected ${allowed.join(', ')}.`,
      };
    }
    if (name !== token) values.set(name, token.slice(eq + 1));
    else if (i + 1 < args.length) values.set(name, args[++i]);
    else return { error: `Option ${name} needs a value.` };
  }
  return { values };
}

function requireOption(values: OptionValues, name: string): string | { error: string } {
  return values.get(name) ?? { error: `Missing required option ${name}.` };
}

function classifyCommand(args: string[], io: Io): number {
  const options = readOptions('classify', args, ['--review-output']);
  if ('error' in options) return usageError(io, options.error);
  const review = requireOption(options.values, '--review-output');
  if (typeof review !== 'string') return usageError(io, review.error);
  io.out(toContractJson({ counts: classifyReview(review) }));
  return 0;
}

function checkCommand(args: string[], io: Io): number {
  const options = readOptions('check', args, ['--review-output', '--iteration', '--history-json']);
  if ('error' in options) return usageError(io, options.error);
  const review = requireOption(options.values, '--review-output');
  if (typeof review !== 'string') return usageError(io, review.error);
  const iterationText = requireOption(options.values, '--iteration');
  if (typeof iterationText !== 'string') return usageError(io, iterationText.error);

  const iteration = parseIteration(iterationText);
  if (iteration === null) {
    io.out(
      toContractJson({
        error: `Invalid --iteration: expected a whole number of 1 or more (got '${iterationText}').`,
      }),
    );
    return 1;
  }
  const history = parseHistory(options.values.get('--history-json') ?? '[]');
  if ('error' in history) {
    io.out(toContractJson({ error: `Invalid --history-json: ${history.error}` }));
    return 1;
  }
  io.out(toContractJson(qualityDecision(classifyReview(review), iteration, history.records)));
  return 0;
}

function parseIteration(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\+?[0-9]+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) && value >= 1 ? value : null;
}

function parseHistory(text: string): { records: IterationRecord[] } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { error: (e as Error).message };
  }
  const parsed = ReviewHistorySchema.safeParse(raw);
  if (parsed.success) return { records: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    error: issue.path.length ? `${formatPath(['history', ...issue.path])}: ${issue.message}` : issue.message,
  };
}
