/**
 * Reading what an agent answered (the planner/reviewer protocol): the report file, else the last fenced `json` block of
 * its stdout; and the token usage and cost that agent CLIs print. Pure.
 */
import { checksRunAfter, type AgentFailure } from './cli-output';
import type { Usage } from '../contract/state';

export interface ExtractedReport {
  /** The JSON object the agent answered with, or null. */
  report: Record<string, unknown> | null;
  /** Why an answer that was given could not be read; null when fine or when nothing was given. */
  error: string | null;
}

const FENCED_JSON = /```json[^\S\n]*\r?\n([\s\S]*?)\r?\n?```/g;

/** The body of the LAST fenced ```json block of `text`, or null. */
export function lastJsonBlock(text: string): string | null {
  let last: string | null = null;
  for (const match of text.matchAll(FENCED_JSON)) last = match[1];
  return last;
}

export function extractReport(reportFileText: string | null, stdoutTail: string): ExtractedReport {
  if (reportFileText && reportFileText.trim()) return parseObject(reportFileText, 'the report file');
  // Claude's `--output-format json` wraps the answer text in a JSON envelope's `result` string.
  const searched = [unwrapResultEnvelope(stdoutTail), stdoutTail].filter((t): t is string => t !== null);
  for (const text of searched) {
    const block = lastJsonBlock(text);
    if (block !== null) return parseObject(block, 'the last ```json block of stdout');
  }
  return { report: null, error: null };
}

function parseObject(text: string, where: string): ExtractedReport {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { report: null, error: `${where} is not valid JSON: ${(err as Error).message}` };
  }
  if (!isObject(value)) {
    return { report: null, error: `${where} must hold one JSON object, got ${describe(value)}` };
  }
  return { report: value, error: null };
}

/** The `result` text of the last agent-CLI JSON envelope in `text` (whole text or one line of it). */
function unwrapResultEnvelope(text: string): string | null {
  for (const candidate of jsonCandidates(text)) {
    if (typeof candidate.result === 'string') return candidate.result;
  }
  return null;
}

/** JSON objects found in `text`: the whole text, then each line from the last one up. */
function* jsonCandidates(text: string): Generator<Record<string, unknown>> {
  const whole = tryParse(text.trim());
  if (isObject(whole)) yield whole;
  const lines = text.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (!line.startsWith('{')) continue;
    const value = tryParse(line);
    if (isObject(value)) yield value;
  }
}

/**
 * Usage from Claude Code's `--output-format json` (or stream-json) result (`usage.input_tokens`,
 * `usage.output_tokens`, `total_cost_usd`), or Codex's `tokens used: N` / `input=N output=N` lines.
 * Codex reports only a total in older versions; it is counted as input tokens. Null when none is found.
 */
export function parseUsage(text: string): Usage | null {
  for (const candidate of jsonCandidates(text)) {
    const usage = candidate.usage;
    const cost = candidate.total_cost_usd ?? candidate.cost_usd;
    if (!isObject(usage) && typeof cost !== 'number') continue;
    return {
      inputTokens: numberOr0(isObject(usage) ? usage.input_tokens : undefined),
      outputTokens: numberOr0(isObject(usage) ? usage.output_tokens : undefined),
      costUsd: numberOr0(cost),
    };
  }
  const split = [...text.matchAll(/\binput[=:]\s*([\d,]+)[^\n]*?\boutput[=:]\s*([\d,]+)/gi)].pop();
  if (split) return { inputTokens: toInt(split[1]), outputTokens: toInt(split[2]), costUsd: 0 };
  const total = [...text.matchAll(/tokens used:?\s*([\d,]+)/gi)].pop();
  if (total) return { inputTokens: toInt(total[1]), outputTokens: 0, costUsd: 0 };
  return null;
}

const toInt = (digits: string): number => Number(digits.replace(/,/g, ''));
const numberOr0 = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

function tryParse(text: string): unknown {
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The agent ran to a zero exit on its own (not killed for a timeout or for printing nothing too long), and
 * its output reports no failure that rules out its work (a denied tool call does not: the checks decide).
 */
export const agentSucceeded = (run: {
  exitCode: number | null;
  timedOut: boolean;
  idle: boolean;
  failure?: AgentFailure | null;
}): boolean => run.exitCode === 0 && !run.timedOut && !run.idle && checksRunAfter(run.failure);
