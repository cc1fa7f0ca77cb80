/**
 * What an agent CLI's own output says about its run (DESIGN.md 4.1, issue "real coding agents"): the
 * session id, the model, token usage and cost, and — the point of it — whether the run failed for a reason
 * that another attempt cannot fix (not installed, not authenticated, denied by its permission mode, an
 * unknown model), so the saga stops at once with that reason instead of paying for the same failure again.
 * One reader per output format (agent-presets.ts); each takes the transcript text (stdout and stderr, as
 * the CLI printed them). Pure.
 */
import { z } from 'zod';
import type { AgentOutputFormat, ModelPrice } from './agent-presets';
import { arr, claudeUsage, num, obj, opencodeStepUsage, str, tryJson, type Json } from './json-fields';
import type { Usage } from './state';
import { addUsage, noUsage, priceTokens } from './usage';

export const AGENT_FAILURE_KINDS = [
  'not-installed',
  'not-authenticated',
  'permission-denied',
  'model-not-found',
  'max-turns',
  'budget',
  'cli-error',
] as const;
export type AgentFailureKind = (typeof AGENT_FAILURE_KINDS)[number];

export const AgentFailureSchema = z.object({
  kind: z.enum(AGENT_FAILURE_KINDS),
  /** Could another attempt, unchanged, succeed? */
  retryable: z.boolean(),
  /** One line for the task status, the escalation prompt and `saga status`. */
  message: z.string(),
});
export type AgentFailure = z.infer<typeof AgentFailureSchema>;

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
}

/** Failures after which the agent may still have done the task's work: the checks decide. */
const CHECKS_STILL_RUN: ReadonlySet<AgentFailureKind> = new Set(['permission-denied', 'max-turns', 'budget']);
const RETRYABLE: ReadonlySet<AgentFailureKind> = new Set(['max-turns', 'cli-error']);

/** Whether the task's checks run after this run (they never run after a crash, timeout or hard failure). */
export const checksRunAfter = (failure: AgentFailure | null | undefined): boolean =>
  !failure || CHECKS_STILL_RUN.has(failure.kind);

const SEE_README = "see README 'Agent presets'";

export function failure(kind: AgentFailureKind, message: string): AgentFailure {
  return { kind, retryable: RETRYABLE.has(kind), message };
}

export function notInstalledFailure(profile: string, program: string, detail: string): AgentFailure {
  return failure(
    'not-installed',
    `agent ${profile} could not start: '${program}' ${detail} — install it or fix the profile's command; run 'saga doctor --agent ${profile}'`,
  );
}

interface ReadInput {
  profile: string;
  format: AgentOutputFormat;
  /** stdout and stderr of the run. */
  transcript: string;
  exitCode: number | null;
  /** aider: its analytics JSONL. */
  sideOutput?: string;
  /** Set when the run was stopped for a hopeless retry (`hopelessRetry`): its reason. */
  stoppedFor?: string;
  /** The profile's model, for pricing when the output names none. */
  model?: string | null;
  prices?: Readonly<Record<string, ModelPrice>>;
}

/** Reads one run's outcome from its output. Unknown formats and plain text still get the generic checks. */
export function readAgentOutcome(input: ReadInput): AgentRunOutcome {
  const lines = jsonLines(input.transcript);
  const reader = READERS[input.format];
  const read = reader(lines, input);
  const outcome: AgentRunOutcome = {
    sessionId: read.sessionId ?? null,
    model: read.model ?? input.model ?? null,
    usage: read.usage ?? null,
    failure: read.failure ?? null,
    answer: answerText(input.format, lines),
  };
  if (input.stoppedFor) outcome.failure = notAuthenticated(input.profile, input.stoppedFor);
  if (outcome.usage && !read.costKnown)
    outcome.usage = estimateCost(outcome.usage, outcome.model, input.prices);
  if (!outcome.failure && input.exitCode !== 0)
    outcome.failure = textFailure(input.profile, input.transcript);
  return outcome;
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
  if (!event || format === 'text' || format === 'aider') return line;
  const text = LINE_READERS[format](event);
  return text === undefined ? line : text === null ? null : oneLine(text);
}

const toolCall = (name: string, input: Json | null) => `→ ${describeTool(name, normalisePath(input))}`;
type LineReader = (e: Json) => string | null | undefined;
const LINE_READERS: Record<Exclude<AgentOutputFormat, 'text' | 'aider'>, LineReader> = {
  claude: (e) => {
    if (e.type === 'system' && e.subtype === 'init') return `session ${str(e.session_id)} (${str(e.model)})`;
    if (e.type === 'system' && e.subtype === 'api_retry') return `retrying the API (${num(e.error_status)})`;
    if (e.type === 'result')
      return `= ${str(e.subtype) ?? 'done'}${e.is_error ? ' (error)' : ''}: ${num(e.num_turns)} turns, $${num(e.total_cost_usd).toFixed(4)}`;
    const content = arr(obj(e.message)?.content).map(obj);
    if (e.type === 'assistant')
      return (
        content
          .map((c) =>
            c?.type === 'text'
              ? str(c.text)
              : c?.type === 'tool_use'
                ? toolCall(str(c.name) ?? 'tool', obj(c.input))
                : null,
          )
          .filter(Boolean)
          .join(' ') || null
      );
    if (e.type === 'user') {
      const result = content.find((c) => c?.type === 'tool_result');
      return result?.is_error ? `← error: ${JSON.stringify(result.content ?? '').slice(0, 120)}` : null;
    }
    return null;
  },
  codex: (e) => {
    const item = obj(e.item);
    if (e.type === 'thread.started') return `session ${str(e.thread_id)}`;
    if (e.type === 'turn.completed') {
      const u = obj(e.usage);
      return `= turn done: ${num(u?.input_tokens)} in / ${num(u?.output_tokens)} out tokens`;
    }
    if (e.type === 'error' || e.type === 'turn.failed')
      return `error: ${str(e.message) ?? str(obj(e.error)?.message)}`;
    if (e.type !== 'item.completed' || !item) return null;
    if (item.type === 'agent_message') return str(item.text);
    if (item.type === 'command_execution') return `$ ${str(item.command)} (exit ${String(item.exit_code)})`;
    if (item.type === 'file_change')
      return `edited ${arr(item.changes)
        .map((c) => str(obj(c)?.path))
        .filter(Boolean)
        .join(', ')}`;
    if (item.type === 'error') return `error: ${str(item.message)}`;
    return null;
  },
  gemini: (e) => {
    if (e.type === 'init') return `session ${str(e.session_id)} (${str(e.model)})`;
    if (e.type === 'message') return e.role === 'assistant' ? str(e.content) : null;
    if (e.type === 'tool_use') return toolCall(str(e.tool_name) ?? 'tool', obj(e.parameters));
    if (e.type === 'tool_result')
      return e.status === 'success' ? null : `← ${str(obj(e.error)?.message) ?? str(e.status)}`;
    if (e.type === 'result')
      return `= ${str(e.status)}${obj(e.error) ? `: ${str(obj(e.error)?.message)}` : ''}`;
    return null;
  },
  opencode: (e) => {
    const part = obj(e.part) ?? {};
    if (e.type === 'text') return str(part.text);
    if (e.type === 'tool_use') {
      const state = obj(part.state);
      return `${toolCall(str(part.tool) ?? 'tool', obj(state?.input))}${state?.status === 'error' ? ` ✗ ${str(state.error)}` : ''}`;
    }
    if (e.type === 'error')
      return `error: ${str(obj(obj(e.error)?.data)?.message) ?? str(obj(e.error)?.name)}`;
    return null;
  },
};

/** What the agent said, from its CLI's events: the result text, else its messages in order. */
function answerText(format: AgentOutputFormat, lines: Json[]): string | null {
  const joined = (parts: Array<string | null>, glue: string) => {
    const text = parts.filter((p): p is string => Boolean(p)).join(glue);
    return text || null;
  };
  switch (format) {
    case 'claude': {
      const result = [...lines].reverse().find((l) => l.type === 'result' && typeof l.result === 'string');
      if (result) return str(result.result);
      const said = lines
        .filter((l) => l.type === 'assistant')
        .flatMap((l) => arr(obj(l.message)?.content).map(obj))
        .map((c) => (c?.type === 'text' ? str(c.text) : null));
      return joined(said, '\n');
    }
    case 'codex':
      return joined(
        lines.map((l) => obj(l.item)).map((i) => (i?.type === 'agent_message' ? str(i.text) : null)),
        '\n',
      );
    case 'gemini': {
      const single = lines.find((l) => typeof l.response === 'string');
      if (single) return str(single.response);
      // stream-json sends the assistant's text in deltas: glue them back together.
      return joined(
        lines.map((l) => (l.type === 'message' && l.role === 'assistant' ? str(l.content) : null)),
        '',
      );
    }
    case 'opencode':
      return joined(
        lines.map((l) => (l.type === 'text' ? str(obj(l.part)?.text) : null)),
        '\n',
      );
    default:
      return null;
  }
}

interface Read {
  sessionId?: string | null;
  model?: string | null;
  usage?: Usage | null;
  costKnown?: boolean;
  failure?: AgentFailure | null;
}
type Reader = (lines: Json[], input: ReadInput) => Read;

const READERS: Record<AgentOutputFormat, Reader> = {
  text: () => ({}),
  claude: readClaude,
  codex: readCodex,
  gemini: readGemini,
  opencode: readOpencode,
  aider: readAider,
};

// ---- Claude Code: `--output-format stream-json --verbose` (or `json`): the last `result` object.
function readClaude(lines: Json[], input: ReadInput): Read {
  const init = lines.find((l) => l.type === 'system' && l.subtype === 'init');
  const result = [...lines].reverse().find((l) => l.type === 'result' || 'total_cost_usd' in l);
  if (!result) return { sessionId: str(init?.session_id), model: str(init?.model) };
  const usage = obj(result.usage);
  const modelUsage = obj(result.modelUsage);
  const read: Read = {
    sessionId: str(result.session_id) ?? str(init?.session_id),
    model: (modelUsage ? Object.keys(modelUsage)[0] : null) ?? str(init?.model),
    usage: usage ? claudeUsage(usage, num(result.total_cost_usd)) : null,
    costKnown: typeof result.total_cost_usd === 'number',
  };
  const subtype = str(result.subtype) ?? '';
  const text = str(result.result) ?? '';
  const denials = arr(result.permission_denials)
    .map(obj)
    .filter((d): d is Json => d !== null);
  if (subtype === 'error_max_turns') {
    read.failure = failure('max-turns', `agent ${input.profile} stopped at its turn limit (--max-turns)`);
  } else if (subtype === 'error_max_budget_usd') {
    read.failure = failure(
      'budget',
      `agent ${input.profile} stopped at its own budget cap (--max-budget-usd)`,
    );
  } else if (result.is_error === true) {
    read.failure =
      apiFailure(input.profile, `${text} ${str(result.error) ?? ''}`) ??
      failure('cli-error', `agent ${input.profile} failed: ${oneLine(text || subtype || 'is_error')}`);
  } else if (denials.length > 0) {
    read.failure = deniedFailure(
      input.profile,
      denials.map((d) => describeTool(str(d.tool_name) ?? 'tool', obj(d.tool_input))),
    );
  }
  return read;
}

// ---- Codex: `exec --json` JSONL: thread.started, item.*, turn.completed {usage}, turn.failed, error.
function readCodex(lines: Json[], input: ReadInput): Read {
  const thread = lines.find((l) => l.type === 'thread.started');
  let usage: Usage | null = null;
  for (const line of lines) {
    const u = line.type === 'turn.completed' ? obj(line.usage) : null;
    if (!u) continue;
    usage = addUsage(usage ?? noUsage(), {
      inputTokens: num(u.input_tokens),
      outputTokens: num(u.output_tokens) + num(u.reasoning_output_tokens),
      costUsd: 0,
      cachedInputTokens: num(u.cached_input_tokens),
    });
  }
  const errors = lines
    .filter((l) => l.type === 'error' || l.type === 'turn.failed')
    .map((l) => str(l.message) ?? str(obj(l.error)?.message) ?? JSON.stringify(l));
  const read: Read = { sessionId: str(thread?.thread_id), usage };
  if (errors.length) {
    const text = errors.join(' ');
    read.failure =
      apiFailure(input.profile, text) ??
      failure('cli-error', `agent ${input.profile} failed: ${oneLine(errors[errors.length - 1]!)}`);
  } else if (/blocked by read-only sandbox|rejected by user approval settings/.test(input.transcript)) {
    // A denied edit leaves no JSON event; only codex's stderr says so.
    read.failure = failure(
      'permission-denied',
      `agent ${input.profile} was refused edits by its sandbox (read-only) — its sandbox mode blocks edits; ${SEE_README}`,
    );
  } else {
    const broken = lines
      .map((l) => (l.type === 'item.completed' ? obj(l.item) : null))
      .find((item) => item && /bwrap:|landlock|seccomp/i.test(str(item.aggregated_output) ?? ''));
    if (broken)
      read.failure = failure(
        'permission-denied',
        `agent ${input.profile}: its sandbox cannot start on this machine (${oneLine(firstMatchingLine(str(broken.aggregated_output) ?? '', /bwrap|landlock|seccomp/i))}) — ${SEE_README}`,
      );
  }
  return read;
}

// ---- Gemini CLI: `stream-json` (init, message, tool_use, tool_result, result) or `json` (one object).
function readGemini(lines: Json[], input: ReadInput): Read {
  const init = lines.find((l) => l.type === 'init');
  const result =
    [...lines].reverse().find((l) => l.type === 'result') ??
    [...lines].reverse().find((l) => 'session_id' in l && ('stats' in l || 'error' in l));
  const stats = obj(result?.stats);
  const read: Read = {
    sessionId: str(result?.session_id) ?? str(init?.session_id),
    model: busiestModel(obj(stats?.models)) ?? str(init?.model),
    usage: stats ? geminiUsage(stats) : null,
  };
  const error =
    obj(result?.error) ?? lines.find((l) => l.type === 'error' && typeof l.message === 'string') ?? null;
  const denied = lines
    .filter(
      (l) =>
        l.type === 'tool_result' &&
        /tool_not_registered|policy_violation/.test(str(obj(l.error)?.type) ?? ''),
    )
    .map((l) => (str(l.tool_id) ?? 'tool').split('__')[0]!);
  if (error || (str(result?.status) ?? 'success') !== 'success') {
    const text = `${str(error?.message) ?? ''} ${str(error?.type) ?? ''}`.trim();
    read.failure = /TurnLimited|max session turns/i.test(text)
      ? failure('max-turns', `agent ${input.profile} stopped at its turn limit (maxSessionTurns)`)
      : (apiFailure(input.profile, text) ??
        failure('cli-error', `agent ${input.profile} failed: ${oneLine(text || 'error')}`));
  } else if (input.exitCode === 41) {
    read.failure = notAuthenticated(
      input.profile,
      firstMatchingLine(input.transcript, /key|auth/i) || 'exit 41',
    );
  } else if (input.exitCode === 55) {
    read.failure = failure(
      'permission-denied',
      `agent ${input.profile} refused to run in an untrusted folder (exit 55) — add --skip-trust; ${SEE_README}`,
    );
  } else if (denied.length) {
    read.failure = deniedFailure(input.profile, denied);
  }
  return read;
}

/** stream-json: totals at the top of `stats` (input includes cached); json: per model `tokens`. */
function geminiUsage(stats: Json): Usage {
  if ('input_tokens' in stats)
    return addUsage(noUsage(), {
      inputTokens: num(stats.input_tokens),
      outputTokens: num(stats.output_tokens),
      costUsd: 0,
      cachedInputTokens: num(stats.cached),
    });
  let usage = noUsage();
  for (const entry of Object.values(obj(stats.models) ?? {})) {
    const tokens = obj(obj(entry)?.tokens) ?? {};
    usage = addUsage(usage, {
      inputTokens: num(tokens.prompt ?? tokens.input),
      outputTokens: num(tokens.candidates) + num(tokens.thoughts),
      costUsd: 0,
      cachedInputTokens: num(tokens.cached),
    });
  }
  return usage;
}

/** The model that used the most tokens (Gemini CLI also calls a small router model). */
function busiestModel(models: Json | null): string | null {
  if (!models) return null;
  const total = (entry: unknown) => {
    const e = obj(entry) ?? {};
    return num(e.total_tokens) || num(obj(e.tokens)?.total);
  };
  const ranked = Object.entries(models).sort((a, b) => total(b[1]) - total(a[1]));
  return ranked[0]?.[0] ?? null;
}

// ---- opencode: `run --format json` events; `step_finish` parts carry tokens and cost.
function readOpencode(lines: Json[], input: ReadInput): Read {
  const read: Read = {};
  const denied: string[] = [];
  let usage: Usage | null = null;
  for (const line of lines) {
    read.sessionId ??= str(line.sessionID) ?? str(obj(line.part)?.sessionID);
    const part = obj(line.part) ?? line;
    if ((line.type === 'step_finish' || part.type === 'step-finish') && obj(part.tokens)) {
      usage = addUsage(usage ?? noUsage(), opencodeStepUsage(part, obj(part.tokens)!));
      read.costKnown ||= typeof part.cost === 'number' && part.cost > 0;
    }
    if (line.type === 'error') {
      const error = obj(line.error);
      const data = obj(error?.data);
      const message = str(data?.message) ?? str(error?.message) ?? str(error?.name) ?? JSON.stringify(line);
      const status = num(data?.statusCode);
      read.failure =
        status === 401 || status === 403
          ? notAuthenticated(input.profile, `${status} ${message}`)
          : (apiFailure(input.profile, message) ??
            failure('cli-error', `agent ${input.profile} failed: ${oneLine(message)}`));
    }
    // A tool call that asked for permission is auto-rejected in a headless run.
    const state = obj(part.state);
    if (
      line.type === 'tool_use' &&
      state?.status === 'error' &&
      /rejected permission/.test(str(state.error) ?? '')
    )
      denied.push(describeTool(str(part.tool) ?? 'tool', normalisePath(obj(state.input))));
  }
  read.usage = usage;
  if (!read.failure && denied.length) read.failure = deniedFailure(input.profile, denied);
  return read;
}

// ---- aider: no JSON on stdout; `--analytics-log` JSONL `message_send` events carry tokens and cost.
function readAider(_lines: Json[], input: ReadInput): Read {
  const read: Read = {};
  let usage: Usage | null = null;
  for (const event of jsonLines(input.sideOutput ?? '')) {
    if (event.event !== 'message_send') continue;
    const p = obj(event.properties) ?? {};
    read.model ??= str(p.main_model);
    usage = addUsage(usage ?? noUsage(), {
      inputTokens: num(p.prompt_tokens),
      outputTokens: num(p.completion_tokens),
      costUsd: num(p.cost),
    });
    read.costKnown ||= num(p.cost) > 0;
  }
  read.usage = usage;
  const apiError = apiFailure(input.profile, input.transcript);
  if (apiError) read.failure = apiError;
  return read;
}

// ---- Shared diagnosis.

/** Auth and model errors, recognised in any CLI's error text. */
function apiFailure(profile: string, text: string): AgentFailure | null {
  if (AUTH_ERROR.test(text)) return notAuthenticated(profile, errorDetail(text, AUTH_ERROR));
  if (MODEL_ERROR.test(text))
    return failure(
      'model-not-found',
      `agent ${profile}: the model was not found (${errorDetail(text, MODEL_ERROR)}) — fix the model in the profile's command or config`,
    );
  return null;
}

const AUTH_ERROR =
  /Incorrect API key|didn't provide an API key|api_key client option must be set|\b401\b|invalid[ _-]?(x-)?api[ _-]?key|API key not valid|API_KEY_INVALID|authentication[_ ]?error|unauthori[sz]ed|not logged in|please run \/login|no api key|missing api key|Missing environment variable|must specify the \w+ environment variable|AuthenticationError/i;
const MODEL_ERROR =
  /model[_ ]not[_ ]found|not_found_error|does not exist|is not found for API version|unknown model|issue with the selected model|NotFoundError/i;

/** The line that matched, reduced to the API's own `message` when it quotes a JSON error body. */
function errorDetail(text: string, pattern: RegExp): string {
  const line = firstMatchingLine(text, pattern);
  const quoted = /"message"\s*:\s*"((?:[^"\\]|\\.)+)"/.exec(line)?.[1];
  return oneLine(quoted ?? line);
}

const notAuthenticated = (profile: string, detail: string): AgentFailure =>
  failure(
    'not-authenticated',
    `agent ${profile} is not authenticated (${oneLine(detail)}) — set its API key or log in; run 'saga doctor --agent ${profile}'`,
  );

function deniedFailure(profile: string, calls: string[]): AgentFailure {
  const shown = calls.slice(0, 3).join(', ');
  const more = calls.length > 3 ? `, and ${calls.length - 3} more` : '';
  return failure(
    'permission-denied',
    `agent ${profile} was denied ${calls.length} tool call${calls.length === 1 ? '' : 's'}: ${shown}${more} — its permission mode blocks them; ${SEE_README}`,
  );
}

/** A failed run whose output has no structured error: look for the usual auth/model texts. */
function textFailure(profile: string, transcript: string): AgentFailure | null {
  return apiFailure(profile, transcript.slice(-16_384));
}

/** Tokens priced from the table when the CLI gave no cost. */
export function estimateCost(
  usage: Usage,
  model: string | null,
  prices?: Readonly<Record<string, ModelPrice>>,
): Usage {
  const price = model ? findPrice(model, prices ?? {}) : null;
  if (!price) return usage;
  return { ...usage, costUsd: priceTokens(usage, price), costEstimated: true };
}

/** Exact name, else the longest table entry the model's name starts with (`gpt-5-2026-01` → `gpt-5`). */
function findPrice(model: string, prices: Readonly<Record<string, ModelPrice>>): ModelPrice | null {
  const name = model.replace(/^models\//, '');
  if (prices[name]) return prices[name]!;
  const prefix = Object.keys(prices)
    .filter((k) => name.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  return prefix ? prices[prefix]! : null;
}

/** opencode names the path `filePath`. */
const normalisePath = (input: Json | null): Json | null =>
  input && typeof input.filePath === 'string' ? { ...input, file_path: input.filePath } : input;

/** `Bash(npm test)`, `Write(…/src/app.js)`: a command keeps its start, a path its end. */
function describeTool(name: string, input: Json | null): string {
  const command = str(input?.command);
  const file = str(input?.file_path) ?? str(input?.path);
  const max = 40;
  const short = command
    ? command.length > max
      ? `${command.slice(0, max - 1)}…`
      : command
    : file && file.length > max
      ? `…${file.slice(-(max - 1))}`
      : (file ?? '');
  return short ? `${name}(${short})` : name;
}

function firstMatchingLine(text: string, pattern: RegExp): string {
  const lines = text.split(/\r?\n/).filter((l) => l.trim());
  return lines.find((l) => pattern.test(l)) ?? lines[lines.length - 1] ?? '';
}

const oneLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
};

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

/** Every line of `text` that is a JSON object. */
export function jsonLines(text: string): Json[] {
  const out: Json[] = [];
  const whole = text.trim();
  // `--output-format json` may pretty-print one object over several lines.
  if (whole.startsWith('{') && whole.endsWith('}') && !whole.includes('\n{')) {
    const value = tryJson(whole);
    if (value) return [value];
  }
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    const value = tryJson(t);
    if (value) out.push(value);
  }
  return out;
}
