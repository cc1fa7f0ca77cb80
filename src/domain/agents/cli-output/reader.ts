/** What a reader of one CLI's output (one per output format, agent-presets.ts) is given and gives back. */
import type { AgentOutputFormat } from '../../config/agent-presets';
import type { ModelPrice } from '../../config/model-prices';
import type { Json } from '../../text/json-fields';
import type { Usage } from '../../contract/state';
import type { AgentFailure } from './failures';

export interface ReadInput {
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

/** What one CLI's output says; anything left out is filled in by readAgentOutcome. */
export interface Read {
  sessionId?: string | null;
  model?: string | null;
  usage?: Usage | null;
  costKnown?: boolean;
  failure?: AgentFailure | null;
}

export interface CliOutputReader {
  /** The run's session, model, usage and failure, from its whole output (JSON lines and raw text). */
  outcome(lines: Json[], input: ReadInput): Read;
  /**
   * One JSON event as a person reads it; null hides bookkeeping events. Without it, lines are shown as the
   * CLI printed them.
   */
  line?(event: Json): string | null | undefined;
  /** What the agent said, from its CLI's events. Without it, stdout itself is the answer. */
  answer?(lines: Json[]): string | null;
}
