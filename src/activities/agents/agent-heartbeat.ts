/**
 * What a running agent shows: its heartbeat details (the last line a person can read, not the last raw
 * JSON event; its session and usage so far), read from its output line by line.
 */
import { hopelessRetry, readableLine } from '../../domain/agents/cli-output';
import { createAgentStreamReader } from '../../domain/agents/agent-stream';
import type { ProcessProgress } from '../process/process';
import type { AgentProgress, AgentRunHooks, AgentRunInput } from './input';

/** One agent run's heartbeats (the implementation phase's counts are `LiveProgress`, phase-progress.ts). */
export class AgentHeartbeat {
  readonly stream;
  private lastReadable = '';
  private lastProgress: ProcessProgress = { outputBytes: 0, lastLine: '', elapsedMs: 0 };

  constructor(
    private readonly input: AgentRunInput,
    private readonly hooks: AgentRunHooks,
    private readonly host: string,
    private readonly resumeId: string | null,
    /** Called when the output first names the CLI's session (or a new one). */
    private readonly onSession: (sessionId: string) => void,
  ) {
    this.stream = createAgentStreamReader(input.profile.output, {
      model: input.profile.model,
      prices: input.profile.prices,
    });
  }

  /** Heartbeats the process's progress (the last progress known, when none is given). */
  beat(progress: ProcessProgress = this.lastProgress): void {
    this.lastProgress = progress;
    this.hooks.heartbeat(this.details(progress));
  }

  private details(progress: ProcessProgress): AgentProgress {
    const live = this.stream.snapshot();
    return {
      ...progress,
      lastLine: this.lastReadable || progress.lastLine,
      runLabel: this.input.runLabel,
      attempt: this.input.attempt,
      host: this.host,
      sessionId: live.sessionId ?? this.resumeId,
      usage: live.usage,
    };
  }

  /** Reads one line of output; says why retrying is hopeless when the line shows it (the run stops then). */
  readLine(line: string): string | null {
    const output = this.input.profile.output;
    const readable = readableLine(output, line)?.trim();
    if (readable) this.lastReadable = readable.slice(0, 200);
    const known = this.stream.snapshot().sessionId;
    this.stream.read(line);
    const sessionId = this.stream.snapshot().sessionId;
    if (sessionId && sessionId !== known) {
      // At once, not at the next progress tick: a crash right after must still find it.
      this.beat();
      this.onSession(sessionId);
    }
    return hopelessRetry(output, line);
  }
}
