/** Gemini CLI: `stream-json` (init, message, tool_use, tool_result, result) or `json` (one object). */
import { num, obj, str, type Json } from '../../text/json-fields';
import { geminiStatsUsage } from './cli-usage';
import type { Usage } from '../../contract/state';
import { addUsage, noUsage } from '../usage';
import { apiFailure, deniedFailure, failure, notAuthenticated, SEE_README } from './failures';
import type { CliOutputReader, Read, ReadInput } from './reader';
import { firstMatchingLine, joined, oneLine, toolCall } from './text';

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
  if ('input_tokens' in stats) return geminiStatsUsage(stats);
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

function lineText(e: Json): string | null {
  if (e.type === 'init') return `session ${str(e.session_id)} (${str(e.model)})`;
  if (e.type === 'message') return e.role === 'assistant' ? str(e.content) : null;
  if (e.type === 'tool_use') return toolCall(str(e.tool_name) ?? 'tool', obj(e.parameters));
  if (e.type === 'tool_result')
    return e.status === 'success' ? null : `← ${str(obj(e.error)?.message) ?? str(e.status)}`;
  if (e.type === 'result')
    return `= ${str(e.status)}${obj(e.error) ? `: ${str(obj(e.error)?.message)}` : ''}`;
  return null;
}

function answerText(lines: Json[]): string | null {
  const single = lines.find((l) => typeof l.response === 'string');
  if (single) return str(single.response);
  // stream-json sends the assistant's text in deltas: glue them back together.
  return joined(
    lines.map((l) => (l.type === 'message' && l.role === 'assistant' ? str(l.content) : null)),
    '',
  );
}

export const geminiReader: CliOutputReader = { outcome: readGemini, line: lineText, answer: answerText };
