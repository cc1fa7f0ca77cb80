/**
 * What an agent CLI's own output says about its run (usage, session, failures): the
 * session id, the model, token usage and cost, and — the point of it — whether the run failed for a reason
 * that another attempt cannot fix (not installed, not authenticated, denied by its permission mode, an
 * unknown model), so the saga stops at once with that reason instead of paying for the same failure again.
 * One reader per output format (agent-presets.ts, a module each here); each takes the transcript text
 * (stdout and stderr, as the CLI printed them). Pure.
 */
import type { AgentOutputFormat } from '../../config/agent-presets';
import { num, str, tryJson, type Json } from '../../text/json-fields';
import type { Usage } from '../../contract/state';
import { estimateCost } from '../usage';
import { aiderReader } from './aider';
import { claudeReader } from './claude';
import { codexReader } from './codex';
import { notAuthenticated, textFailure, type AgentFailure } from './failures';
import { geminiReader } from './gemini';
import { opencodeReader } from './opencode';
import type { CliOutputReader, ReadInput } from './reader';
import { jsonLines, oneLine } from './text';

export {
  AGENT_FAILURE_KINDS,
  AgentFailureSchema,
  checksRunAfter,
  failure,
  notInstalledFailure,
  type AgentFailure,
  type AgentFailureKind,
} from './failures';
export { jsonLines } from './text';
export { estimateCost } from '../usage';

export interface AgentRunOutcome {
  sessionId: string | null;
  model: string | null;
  usage: Usage | null;
  failure: AgentFailure | null;
  /**
   * The agent's own final words, unwrapped from the CLI's JSON events (a planner's ```json block, a
   * reviewer's findings); null for plain-text output, where stdout is the answer.
   */
  answer: string | null;
  /** The format the output was read as: the profile's, or `claude` for a plain-text profile printing Claude's JSON. */
  readAs: AgentOutputFormat;
}

const READERS: Record<AgentOutputFormat, CliOutputReader> = {
  text: { outcome: () => ({}) },
  claude: claudeReader,
  codex: codexReader,
  gemini: geminiReader,
  opencode: opencodeReader,
  aider: aiderReader,
};

/** Reads one run's outcome from its output. Unknown formats and plain text still get the generic checks. */
export function readAgentOutcome(input: ReadInput): AgentRunOutcome {
  const lines = jsonLines(input.transcript);
  const readAs = input.format === 'text' && printsClaudeResult(lines) ? 'claude' : input.format;
  const reader = READERS[readAs];
  const read = reader.outcome(lines, input);
  const outcome: AgentRunOutcome = {
    sessionId: read.sessionId ?? null,
    model: read.model ?? input.model ?? null,
    usage: read.usage ?? null,
    failure: read.failure ?? null,
    answer: reader.answer?.(lines) ?? null,
    readAs,
  };
  if (input.stoppedFor) outcome.failure = notAuthenticated(input.profile, input.stoppedFor);
  if (outcome.usage && !read.costKnown)
    outcome.usage = estimateCost(outcome.usage, outcome.model, input.prices);
  if (!outcome.failure && input.exitCode !== 0)
    outcome.failure = textFailure(input.profile, input.transcript);
  return outcome;
}

/**
 * A command of the user's own that wraps `claude -p --output-format json` (or stream-json) prints Claude's
 * result object: its `result` is the answer (a reviewer's findings), not the JSON around it. Claude's result
 * carries a session id or a cost beside its text, which no plain answer does by chance.
 */
function printsClaudeResult(lines: readonly Json[]): boolean {
  return lines.some(
    (l) =>
      l.type === 'result' &&
      typeof l.result === 'string' &&
      (typeof l.session_id === 'string' || typeof l.total_cost_usd === 'number'),
  );
}

/**
 * A line saying the CLI is retrying a request the API refused for its credentials: Claude Code retries a
 * 401 ten times over ~3 minutes, Codex five. Nothing changes between those tries, so the run is stopped at
 * the first one; the text returned is the reason shown.
 */
export function hopelessRetry(format: AgentOutputFormat, line: string): string | null {
  if (format !== 'claude' && format !== 'codex') return null;
  const t = line.trim();
  if (!t.startsWith('{') || !/401|403|authenticat/.test(t)) return null;
  const event = tryJson(t);
  if (!event) return null;
  if (event.type === 'system' && event.subtype === 'api_retry') {
    const status = num(event.error_status);
    return status === 401 || status === 403
      ? `the API answered ${status} ${str(event.error) ?? ''}`.trim() + '; stopped instead of retrying'
      : null;
  }
  if (event.type === 'error') {
    const message = str(event.message) ?? '';
    const status = /unexpected status (401|403)\b[^:,]*/.exec(message);
    return status ? `${status[0]}; stopped instead of retrying` : null;
  }
  return null;
}

/**
 * One line of a CLI's JSON stream as a person reads it (`saga logs`, the live view): what the agent said,
 * which tool it called with what, the outcome. Null hides bookkeeping events; plain text stays as it is.
 */
export function readableLine(format: AgentOutputFormat, line: string): string | null {
  const event = line.trim().startsWith('{') ? tryJson(line.trim()) : null;
  const lineText = event && READERS[format].line;
  if (!event || !lineText) return line;
  const text = lineText(event);
  return text === undefined ? line : text === null ? null : oneLine(text);
}

/**
 * The CLI refused to resume a session it does not know (deleted, made on another machine or HOME): the
 * run is redone as a fresh session. Claude Code, Codex, Gemini CLI and opencode say so in these words.
 */
export function unknownSession(format: AgentOutputFormat, transcript: string): boolean {
  if (format === 'text' || format === 'aider') return false;
  return UNKNOWN_SESSION.test(transcript.slice(-16_384));
}
const UNKNOWN_SESSION =
  /No conversation found with session ID|Invalid session identifier|No previous sessions found|(no|not find|cannot find|could not find) (a )?(saved |recorded )?(session|thread|rollout|conversation)s? (found|with|for|matching)|(session|thread) not found|NotFoundError: Session/i;
