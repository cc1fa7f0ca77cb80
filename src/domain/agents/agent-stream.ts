/**
 * What an agent CLI's JSON stream has said so far, read one line at a time while it runs: its
 * session id as soon as the CLI prints it (so a worker that dies mid-run still knows which session to
 * resume) and the tokens and cost spent so far (the live view). agent-cli-output/ reads the whole
 * transcript once the run has ended; this reader only follows along. Pure.
 */
import type { AgentOutputFormat } from '../config/agent-presets';
import type { ModelPrice } from '../config/model-prices';
import { num, obj, str, tryJson, type Json } from '../text/json-fields';
import { claudeUsage, codexTurnUsage, geminiStatsUsage, opencodeStepUsage } from './cli-output/cli-usage';
import type { Usage } from '../contract/state';
import { addUsage, estimateCost, noUsage } from './usage';

export interface AgentStreamSnapshot {
  sessionId: string | null;
  model: string | null;
  /** Null until the CLI has reported any tokens. */
  usage: Usage | null;
}

export interface AgentStreamReader {
  /** One output line (stdout or stderr); lines that are not JSON events are ignored. */
  read(line: string): void;
  snapshot(): AgentStreamSnapshot;
}

/**
 * A reader for one run. `model` and `prices` price tokens when the CLI gives no cost yet (Claude's cost
 * comes only with its final result; until then the cost shown is an estimate from the price table).
 */
export function createAgentStreamReader(
  format: AgentOutputFormat,
  pricing: { model?: string | null; prices?: Readonly<Record<string, ModelPrice>> } = {},
): AgentStreamReader {
  let sessionId: string | null = null;
  let model: string | null = null;
  /** Usage summed over finished units (Codex turns, opencode steps), or the final total. */
  let settled: Usage | null = null;
  let costKnown = false;
  /** Claude: usage per assistant message id (the stream repeats a message once per content block). */
  const perMessage = new Map<string, Usage>();

  const readers: Partial<Record<AgentOutputFormat, (e: Json) => void>> = {
    claude: (e) => {
      if (e.type === 'system' && e.subtype === 'init') {
        sessionId ??= str(e.session_id);
        model ??= str(e.model);
      }
      const message = obj(e.message);
      const usage = obj(message?.usage);
      if (e.type === 'assistant' && message && usage) {
        model ??= str(message.model);
        perMessage.set(str(message.id) ?? `#${perMessage.size}`, claudeUsage(usage, 0));
      }
      if (e.type === 'result') {
        sessionId ??= str(e.session_id);
        const total = obj(e.usage);
        if (total) {
          settled = claudeUsage(total, num(e.total_cost_usd));
          costKnown = typeof e.total_cost_usd === 'number';
          perMessage.clear();
        }
      }
    },
    codex: (e) => {
      if (e.type === 'thread.started') sessionId ??= str(e.thread_id);
      const u = e.type === 'turn.completed' ? obj(e.usage) : null;
      if (u) settled = addUsage(settled ?? noUsage(), codexTurnUsage(u));
    },
    gemini: (e) => {
      if (e.type === 'init') {
        sessionId ??= str(e.session_id);
        model ??= str(e.model) === 'auto' ? null : str(e.model);
      }
      const stats = e.type === 'result' ? obj(e.stats) : null;
      if (stats) settled = geminiStatsUsage(stats);
    },
    opencode: (e) => {
      const part = obj(e.part) ?? e;
      sessionId ??= str(e.sessionID) ?? str(part.sessionID);
      const tokens = (e.type === 'step_finish' || part.type === 'step-finish') && obj(part.tokens);
      if (!tokens) return;
      settled = addUsage(settled ?? noUsage(), opencodeStepUsage(part, tokens));
      costKnown ||= num(part.cost) > 0;
    },
  };
  const reader = readers[format];

  return {
    read(line) {
      if (!reader) return;
      const t = line.trim();
      if (!t.startsWith('{')) return;
      const event = tryJson(t);
      if (event) reader(event);
    },
    snapshot() {
      let usage: Usage | null = settled;
      for (const u of perMessage.values()) usage = addUsage(usage ?? noUsage(), u);
      const named = model ?? pricing.model ?? null;
      if (usage && !costKnown) usage = estimateCost(usage, named, pricing.prices);
      return { sessionId, model: named, usage };
    },
  };
}
