/** Claude Code: `--output-format stream-json --verbose` (or `json`): the last `result` object. */
import { arr, num, obj, str, type Json } from '../../text/json-fields';
import { claudeUsage } from './cli-usage';
import { apiFailure, deniedFailure, failure } from './failures';
import type { CliOutputReader, Read, ReadInput } from './reader';
import { describeTool, joined, oneLine, toolCall } from './text';

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

function lineText(e: Json): string | null {
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
}

function answerText(lines: Json[]): string | null {
  const result = [...lines].reverse().find((l) => l.type === 'result' && typeof l.result === 'string');
  if (result) return str(result.result);
  const said = lines
    .filter((l) => l.type === 'assistant')
    .flatMap((l) => arr(obj(l.message)?.content).map(obj))
    .map((c) => (c?.type === 'text' ? str(c.text) : null));
  return joined(said, '\n');
}

export const claudeReader: CliOutputReader = { outcome: readClaude, line: lineText, answer: answerText };
