/** Each agent CLI's token and cost report read as the saga's Usage (input counts cached tokens). Pure. */
import type { Usage } from '../../contract/state';
import { num, obj, type Json } from '../../text/json-fields';

/** Claude counts cached and cache-creating tokens apart from input_tokens; saga's input includes them. */
export function claudeUsage(u: Json, costUsd: number): Usage {
  const cached = num(u.cache_read_input_tokens);
  return {
    inputTokens: num(u.input_tokens) + cached + num(u.cache_creation_input_tokens),
    outputTokens: num(u.output_tokens),
    costUsd,
    ...(cached ? { cachedInputTokens: cached } : {}),
  };
}

/** One opencode `step-finish` part's tokens: cache reads and writes count as input, reasoning as output. */
export function opencodeStepUsage(part: Json, tokens: Json): Usage {
  const cache = obj(tokens.cache);
  const cached = num(cache?.read);
  return {
    inputTokens: num(tokens.input) + cached + num(cache?.write),
    outputTokens: num(tokens.output) + num(tokens.reasoning),
    costUsd: num(part.cost),
    cachedInputTokens: cached,
  };
}

/** One Codex `turn.completed` usage: input includes the cached tokens, reasoning counts as output. */
export function codexTurnUsage(u: Json): Usage {
  return {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens) + num(u.reasoning_output_tokens),
    costUsd: 0,
    cachedInputTokens: num(u.cached_input_tokens),
  };
}

/** Gemini CLI's stream-json `stats` totals (input includes the cached tokens); it gives no cost. */
export function geminiStatsUsage(stats: Json): Usage {
  const cached = num(stats.cached);
  return {
    inputTokens: num(stats.input_tokens),
    outputTokens: num(stats.output_tokens),
    costUsd: 0,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
  };
}
