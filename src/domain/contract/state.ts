/**
 * Shapes of the saga's state as workflows hold it and `saga status --json` shows it.
 * Types come from these zod schemas so the CLI, chat bridge and workflows agree.
 */
import { z } from 'zod';
import { FlagsResultSchema } from './flags-result';
import { ReconciliationSchema } from './reconciliation';

export const PHASES = [
  'planning',
  'implementation',
  'validation',
  'acceptance',
  'complete',
  'cancelled',
  'failed',
] as const;
export const PhaseSchema = z.enum(PHASES);
export type Phase = z.infer<typeof PhaseSchema>;
/** The phases a saga ends in: it asks nothing more, though its run may still be cleaning up. */
export const ENDED_PHASES: readonly Phase[] = ['complete', 'cancelled', 'failed'];
export const isEndedPhase = (phase: string): boolean => (ENDED_PHASES as readonly string[]).includes(phase);

export const INTERACTION_KINDS = [
  'confirm-name',
  'question',
  'plan-approval',
  'checkpoint',
  'escalation',
  'budget',
  'acceptance',
] as const;
export const InteractionKindSchema = z.enum(INTERACTION_KINDS);
export type InteractionKind = z.infer<typeof InteractionKindSchema>;

/** Formats an interaction's answer text is checked against (bad input changes nothing: the validator refuses it before history). */
export const TEXT_FORMATS = ['acceptance-issues', 'check-command', 'budget-amount', 'spec-edit'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** Something the saga waits on a person for. `options` are the accepted choices. */
export const InteractionSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/),
  kind: InteractionKindSchema,
  prompt: z.string(),
  options: z.array(z.string()).min(1),
  recommended: z.number().int().nullable(),
  /** Options that need `--text` (e.g. `revise` needs the note). */
  textRequiredFor: z.array(z.string()).default([]),
  /** The form that text must take (e.g. acceptance issues with their checks); refused otherwise. */
  textFormat: z.enum(TEXT_FORMATS).optional(),
  /** Workflow that asked and receives the answer. */
  owner: z.string(),
  openedAt: z.string(),
});
export type Interaction = z.infer<typeof InteractionSchema>;
export type InteractionRequest = Omit<Interaction, 'owner' | 'openedAt' | 'textRequiredFor'> &
  Partial<Pick<Interaction, 'textRequiredFor'>>;

export const AnswerSchema = z.object({
  interactionId: z.string(),
  choice: z.string(),
  choiceIndex: z.number().int(),
  text: z.string().optional(),
  user: z.string(),
  answeredAt: z.string(),
});
export type Answer = z.infer<typeof AnswerSchema>;

/** What a caller sends to answer an interaction (CLI, chat bridge). */
export const RespondInputSchema = z.object({
  interactionId: z.string().min(1),
  choice: z.string().min(1),
  text: z.string().max(20_000).optional(),
  user: z.string().min(1).default('cli'),
});
export type RespondInput = z.input<typeof RespondInputSchema>;

export const TASK_STATUSES = ['pending', 'running', 'passed', 'blocked', 'skipped', 'integrated'] as const;
export const TaskStatusSchema = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const UsageSchema = z.object({
  /** All prompt tokens, the cached ones included. */
  inputTokens: z.number().default(0),
  outputTokens: z.number().default(0),
  costUsd: z.number().default(0),
  /** Of `inputTokens`, those read from the provider's prompt cache (when the CLI says). */
  cachedInputTokens: z.number().optional(),
  /** The CLI gave no cost: it was computed from a price table (saga.config.yaml `prices`). */
  costEstimated: z.boolean().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/**
 * A change to a task's agreed spec after planning (a spec gap's clarification, the user's `edit`, or the
 * saga's adjustment after a blocked delegation): every later attempt gets it, and the task's spec file
 * lists it (docs/PROCEDURE.md §3.12: the spec is updated and the deviation recorded, never silently re-scoped).
 */
export const SpecChangeSchema = z.object({
  source: z.enum(['spec-gap', 'edit', 'adjusted']),
  by: z.string(),
  at: z.string(),
  text: z.string(),
  /** An adjustment of checks or scope decided under --autonomous without asking (listed at acceptance). */
  autonomous: z.boolean().optional(),
  /** An adjustment's new values of the task's fields (absent: the text alone is the change). */
  patch: z
    .object({
      scope: z.string().optional(),
      interfaces: z.string().optional(),
      validation_method: z.string().optional(),
      validation: z.array(z.object({ text: z.string(), check: z.string() })).optional(),
      evidence: z.string().optional(),
    })
    .optional(),
  /** Checks the user chose to verify by hand at acceptance (they could not run here): REPORT.md lists them. */
  byHand: z.array(z.object({ text: z.string(), check: z.string() })).optional(),
});
export type SpecChange = z.infer<typeof SpecChangeSchema>;

export const TaskStateSchema = z.object({
  id: z.string(), // "1.2"
  key: z.string(), // "m1t2"
  milestone: z.number().int(),
  task: z.number().int(),
  slug: z.string(),
  title: z.string(),
  status: TaskStatusSchema,
  branch: z.string(),
  commit: z.string().nullable(),
  attempts: z.number().int(),
  delegations: z.number().int().default(0),
  evidence: z.array(z.string()),
  workflowId: z.string().nullable(),
  runId: z.string().nullable(),
  /**
   * The latest delegation's worktree (null before the first): it exists while the task runs and is removed
   * after the task's durable handoff; the path stays so PROGRESS.md still says where the worker ran.
   */
  worktree: z.string().nullable(),
  reason: z.string().nullable(),
  changedFiles: z.array(z.string()).default([]),
  usage: UsageSchema.optional(),
  /** The agent profile of the latest run and its CLI session id (when the CLI prints one). */
  agent: z
    .object({
      profile: z.string(),
      sessionId: z.string().nullable(),
      /** Fix attempts (and crashed runs) that continued the CLI's session instead of starting cold. */
      resumedRuns: z.number().int().optional(),
      /** Why the latest asked-for resume ran as a fresh session instead. */
      sessionNote: z.string().optional(),
    })
    .optional(),
  /** Why the task is blocked, one line (null otherwise); the agent CLI's own reason when it could not work. */
  error: z.string().nullable().optional(),
  /** Something the user should hear of that is not a failure, e.g. files changed outside `owns`. */
  warning: z.string().nullable().optional(),
  /** Changes to the task's spec since the plan was approved, oldest first. */
  specChanges: z.array(SpecChangeSchema).optional(),
  /** The tasks it waits for (refs like "1.2", the plan's `depends_on`), for the board's graph. */
  dependsOn: z.array(z.string()).optional(),
  /** When its latest delegation started running, and when it stopped (null while running): workflow time. */
  startedAt: z.string().nullable().optional(),
  endedAt: z.string().nullable().optional(),
});
export type TaskState = z.infer<typeof TaskStateSchema>;

export const MilestoneStateSchema = z.object({
  id: z.number().int(),
  slug: z.string(),
  title: z.string(),
  status: z.enum(['pending', 'running', 'integrating', 'integrated', 'failed']),
  tasks: z.array(TaskStateSchema),
  integrationCommit: z.string().nullable().default(null),
  /**
   * An integrated milestone whose task states left the carried state (saga/milestone-records.ts): they are in
   * `file` (relative to the saga directory), and `tasks` above keeps only those that did not land. Absent
   * while the milestone runs, in states of older code, and in every status a reader could expand.
   */
  record: z
    .object({ file: z.string(), tasks: z.number().int().nonnegative(), integrated: z.number().int() })
    .optional(),
});
export type MilestoneState = z.infer<typeof MilestoneStateSchema>;

/** The plan as `saga status` summarises it; the full plan is SAGA.md and the spec tree beside it. */
export const PLAN_STATES = ['awaiting-approval', 'revising', 'approved', 'rejected'] as const;
export const PlanSummarySchema = z.object({
  /** Plan version shown for approval (1, 2 after a revise...); null when restored without it. */
  version: z.number().int().nullable(),
  state: z.enum(PLAN_STATES),
  problem: z.string(),
  milestones: z.number().int(),
  tasks: z.number().int(),
  exitCriteria: z.array(z.string()),
  /** Readable outline: counts, then one line per milestone. */
  text: z.string(),
  specPath: z.string(),
});
export type PlanSummary = z.infer<typeof PlanSummarySchema>;

/** One exit criterion's result in the latest final validation (REPORT.md adds its output excerpt). */
export const ExitResultSchema = z.object({
  id: z.string(),
  /** `by-hand`: the user verifies it at acceptance; `verified-by-user`: they accepted, which confirms it. */
  result: z.enum(['passed', 'failed', 'not-checkable', 'by-hand', 'verified-by-user']),
  /** Path of the kept check output (inside the saga directory). */
  evidence: z.string().nullable(),
});
export type ExitResult = z.infer<typeof ExitResultSchema>;

/**
 * One of the saga's pull requests (`delivery: pr`) as status, PROGRESS.md, REPORT.md and the board show it:
 * the PR, its head commit's CI as last seen, and what the saga did about CI failures and review comments.
 */
export const PullRequestStatusSchema = z.object({
  /** The milestone it delivers; null for the one PR of `pr: single`. */
  milestone: z.number().int().nullable(),
  number: z.number().int().positive(),
  url: z.string(),
  head: z.string(),
  base: z.string(),
  headSha: z.string(),
  draft: z.boolean(),
  state: z.enum(['open', 'closed', 'merged']),
  /** The head commit's CI as last seen; `no-ci` when no check showed up in time. */
  ci: z.enum(['pending', 'success', 'failure', 'no-ci']).default('pending'),
  /** The failing checks' names, as last seen. */
  failing: z.array(z.string()).default([]),
  /** CI fix tasks run for this PR (at most `ci_fix_attempts` before the user is asked). */
  ciFixes: z.number().int().nonnegative().default(0),
  /** Review comments acted on: a fix task each, then a reply in the thread. */
  reviewFixes: z.number().int().nonnegative().default(0),
  /** Review comments listed but not acted on, with why (no write access, a bot). */
  listedComments: z
    .array(z.object({ id: z.number().int(), author: z.string(), place: z.string(), why: z.string() }))
    .default([]),
});
export type PullRequestStatus = z.infer<typeof PullRequestStatusSchema>;

export const SagaStatusSchema = z.object({
  name: z.string(),
  workflowId: z.string(),
  runId: z.string().optional(),
  phase: PhaseSchema,
  goal: z.string(),
  repo: z.string(),
  /** `saga start --config FILE` (absolute), or null when settings come from the repo or saga home. */
  configFile: z.string().nullable().optional(),
  /** A saga from an issue (`saga start --from`, `saga watch`): its reference (`gitea:acme/app#12`) and page. */
  source: z.object({ ref: z.string(), url: z.string() }).nullable().optional(),
  flags: FlagsResultSchema,
  executionMode: z.string(),
  pending: z.array(InteractionSchema),
  milestones: z.array(MilestoneStateSchema),
  integrationBranch: z.string(),
  sagaDir: z.string(),
  uiUrl: z.string(),
  round: z.number().int(),
  /** Task queue of the host that holds the repo (its worker runs the git/agent activities). */
  hostQueue: z.string().optional(),
  usage: UsageSchema.optional(),
  /** Null until the planning phase has written a plan. */
  planSummary: PlanSummarySchema.nullable().optional(),
  /** The most recent log lines, newest first (PROGRESS.md shows the whole log). */
  log: z.array(z.string()),
  /** Why the saga failed, one line (the innermost cause of the failure); null unless phase is `failed`. */
  error: z.string().nullable().optional(),
  /** What the latest `saga continue` found comparing the record with git and the evidence; null before. */
  reconciliation: ReconciliationSchema.nullable().optional(),
  /** The latest final validation's results, in the plan's exit-criteria order; absent before it ran. */
  exitResults: z.array(ExitResultSchema).optional(),
  /** The saga budget (`budget.saga_usd`) as planning left it; null when there is none or before planning. */
  budgetUsd: z.number().nullable().optional(),
  /** The saga's pull requests (`delivery: pr`), bottom of the stack first; absent with `delivery: local`. */
  pullRequests: z.array(PullRequestStatusSchema).optional(),
});
export type SagaStatus = z.infer<typeof SagaStatusSchema>;

/** Phase workflows → saga workflow: state changes for `saga status` (small; big data stays in files). */
export const ProgressEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('milestones'), milestones: z.array(MilestoneStateSchema) }),
  z.object({ type: z.literal('task'), task: TaskStateSchema }),
  z.object({
    type: z.literal('milestone'),
    id: z.number().int(),
    status: MilestoneStateSchema.shape.status,
    integrationCommit: z.string().nullable(),
  }),
  z.object({ type: z.literal('log'), line: z.string() }),
  z.object({ type: z.literal('plan'), summary: PlanSummarySchema }),
  /** A pull request opened or changed (found by its number). */
  z.object({ type: z.literal('pullRequest'), pullRequest: PullRequestStatusSchema }),
]);
export type ProgressEvent = z.infer<typeof ProgressEventSchema>;
