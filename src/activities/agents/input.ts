/** What the `runAgent` activity and `executeAgentRun` take and give back, and what their caller provides. */
import path from 'node:path';
import { z } from 'zod';
import type { AgentFailure } from '../../domain/agents/cli-output';
import { ResolvedAgentProfileSchema } from '../../domain/config/profile-resolution';
import type { Usage } from '../../domain/contract/state';
import type { ProcessProgress } from '../process/process';

export const AGENT_ROLES = ['planner', 'implementer', 'reviewer', 'resolver'] as const;

export const RunAgentInputSchema = z.object({
  sagaName: z.string().min(1),
  sagaDir: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  role: z.enum(AGENT_ROLES),
  /** planner `questions|plan|revise`, reviewer `plan|task`, resolver `merge`, implementer e.g. `implement`. */
  stage: z.string().min(1),
  taskId: z.string(),
  attempt: z.number().int().min(1),
  profile: ResolvedAgentProfileSchema,
  /** The instructions, short text; files and context are added to the prompt file below it. */
  prompt: z.string(),
  /** Files whose text is appended to the prompt file (truncated), e.g. earlier validation output. */
  attachments: z.array(z.string()).default([]),
  /** Machine-readable context, the last ```json block of the prompt file. */
  context: z.record(z.unknown()).default({}),
  workdir: z.string().refine((p) => path.isAbsolute(p), 'must be an absolute path'),
  extraEnv: z.record(z.string()).optional(),
  /** e.g. `m1t2-a1`; sanitised into one folder name under `<sagaDir>/runs/`. */
  runLabel: z.string().min(1),
  /**
   * Continue the CLI's session of an earlier run instead of starting cold: a fix attempt
   * (`retry`, its prompt is the failure notes and check output) or the same run after its worker died
   * (`interrupted`). A null session id, a profile without resume or another host runs fresh, logged.
   */
  resume: z
    .object({
      sessionId: z.string().min(1).nullable(),
      /** The host that ran the session (CLIs keep sessions under the user's home on that machine). */
      host: z.string().nullable().default(null),
      reason: z.enum(['retry', 'interrupted']),
    })
    .optional(),
  /** What the task and saga budgets leave for this run, for CLIs that can cap a run (null: no budget). */
  maxBudgetUsd: z.number().min(0).nullable().optional(),
});
export type RunAgentInput = z.input<typeof RunAgentInputSchema>;
/** The input after parsing: defaults filled in. */
export type AgentRunInput = z.infer<typeof RunAgentInputSchema>;
/** A session to continue (RunAgentInput `resume`). */
export type ResumeRequest = NonNullable<AgentRunInput['resume']>;

export interface RunAgentResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  idle: boolean;
  cancelled: boolean;
  durationMs: number;
  outputBytes: number;
  lastLine: string;
  /** The last lines of its stderr, on one line, capped (absent from results of older workers). */
  stderrTail?: string | null;
  transcriptPath: string;
  promptPath: string;
  reportPath: string;
  report: Record<string, unknown> | null;
  reportError: string | null;
  /** Reviewer only: the findings text (report `findings`, report file text, or the end of stdout). */
  findings: string | null;
  usage: Usage | null;
  /** The CLI's own session id, when its output names one. */
  sessionId?: string | null;
  model?: string | null;
  /** Why the run failed, read from the CLI's output; `retryable: false` ends the task's attempts. */
  failure?: AgentFailure | null;
  /** The machine that ran it (a session can only be resumed there). */
  host?: string;
  /** The session this run continued; null when it started fresh. */
  resumedSession?: string | null;
  /** Why a resume that was asked for ran as a fresh session instead (one line); null otherwise. */
  resumeFallback?: string | null;
}

/** The activity's heartbeat details while an agent runs: the live view, and what a crashed try resumes. */
export interface AgentProgress extends ProcessProgress {
  runLabel: string;
  attempt: number;
  host: string;
  sessionId: string | null;
  usage: Usage | null;
}

/** What a run needs from its caller: an activity passes its heartbeat and cancellation; `saga doctor` its own. */
export interface AgentRunHooks {
  heartbeat(details: AgentProgress): void;
  signal: AbortSignal;
  /** Written in the transcript's header, e.g. `activity attempt 2`. */
  label: string;
  /** The activity's identity (workflow run and activity id), recorded with the session in the run folder. */
  activity?: string;
}

/** This machine's Node binary and saga checkout: the `{node}` and `{saga_root}` of preset commands. */
export interface AgentMachine {
  nodePath: string;
  sagaRoot: string;
  /** Hidden from confined agents; default: the saga directory's parent. */
  sagaHome?: string;
}
