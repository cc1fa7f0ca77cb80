/**
 * What a saga is started with, and the context every phase and task workflow receives.
 * Paths are computed by the client (Node) so workflow code never touches `path` or `fs`.
 */
import { z } from 'zod';
import { CommandSandboxSchema } from '../config/sandbox';
import { BUDGET_ON_EXHAUSTED } from '../config/config';
import { ResolvedAgentProfileSchema } from '../config/profile-resolution';
import { FlagsResultSchema } from '../contract/flags-result';
import { DeliverySettingsSchema } from '../delivery/delivery-config';
import { PlanSchema } from '../plan';
import { IntakeSettingsSchema, IntakeSourceSchema } from '../tracker/issue';

// Defined on the tracker floor, which makes them from the config (tracker/intake-config.ts).
export { IntakeSettingsSchema, type IntakeSettings } from '../tracker/issue';

/** Settings read from saga.config.yaml by an activity at start (host-bound), then fixed in history. */
export const RunSettingsSchema = z.object({
  attempts: z.number().int().min(1),
  checkTimeoutMs: z.number().int().positive(),
  /** Heartbeat timeout of long activities. */
  heartbeatTimeoutMs: z.number().int().positive(),
  defaultAgent: z.string(),
  /** Resolved agent profiles by name. */
  profiles: z.record(z.string(), ResolvedAgentProfileSchema),
  subagentDispatch: z.record(z.string(), z.boolean()),
  agentTimeoutMs: z.record(z.string(), z.number()),
  worktree: z.object({
    copy: z.array(z.string()),
    setup: z.array(z.array(z.string())),
    portRangeSize: z.number().int().positive(),
  }),
  budget: z.object({
    taskUsd: z.number().nullable(),
    sagaUsd: z.number().nullable(),
    onExhausted: z.enum(BUDGET_ON_EXHAUSTED),
  }),
  /** Limits of a task handoff. */
  handoff: z.object({
    maxFiles: z.number().int().positive(),
    maxFileBytes: z.number().int().positive(),
    skipHooks: z.boolean(),
  }),
  /** Worker variables checks and worktree set-up also get (`pass_env`). */
  passEnv: z.array(z.string()),
  /** How checks and worktree set-up run (saga.config.yaml `sandbox` and `network`); older sagas: confined. */
  sandbox: CommandSandboxSchema.default({}),
  /** `delivery: pr`: the forge and how pull requests are opened, watched and merged; absent: local. */
  delivery: DeliverySettingsSchema.optional(),
  /** A saga from an issue (`source` in its input): its tracker and where questions go; absent otherwise. */
  intake: IntakeSettingsSchema.optional(),
});
export type RunSettings = z.infer<typeof RunSettingsSchema>;

export const SagaInputSchema = z.object({
  name: z.string(),
  repo: z.string(),
  base: z.string(),
  goal: z.string(),
  arguments: z.string(),
  flags: FlagsResultSchema,
  plan: PlanSchema.nullable(),
  planSource: z.string().nullable(),
  agent: z.string().nullable(),
  /** `saga start --config FILE` (absolute), used instead of the repo's or saga home's saga.config.yaml. */
  configFile: z.string().nullable().optional(),
  /**
   * `saga start --trust-repo-config`: the repository's saga.config.yaml may set what widens what runs.
   * Absent (older sagas, other starters): it may not.
   */
  trustRepoConfig: z.boolean().optional(),
  /**
   * `saga start --deliver`: delivered as pull requests even when the config says `delivery: local` (saga start
   * refused it unless the config names a `forge:`). Absent: as the config says.
   */
  deliver: z.boolean().optional(),
  /**
   * `saga start --from REF` or `saga watch`: the issue the request came from (untrusted text, made safe).
   * Absent: the request was typed.
   */
  source: IntakeSourceSchema.optional(),
  /**
   * Who confirmed the name before the saga started (`saga watch`: the label is the confirmation), recorded
   * as the confirm-name answer's `by`. Absent: confirm-name is asked.
   */
  confirmedBy: z.string().optional(),
  /** The saga budget in USD set at start (the board's new-saga form), over the config's `budget.saga_usd`. */
  budgetUsd: z.number().positive().optional(),
  /** What runs unconfined (`sandbox: none`), as saga start found it; the confirm-name prompt says so. */
  unconfined: z.array(z.string()).optional(),
  sagaHome: z.string(),
  sagaDir: z.string(),
  /** Folder that holds task worktrees (default: the repo's parent). */
  worktreeRoot: z.string(),
  hostId: z.string(),
  hostQueue: z.string(),
  uiBaseUrl: z.string().nullable(),
  startedAt: z.string(),
});
export type SagaInput = z.infer<typeof SagaInputSchema>;

/** The slice of the saga every child workflow needs. */
export const SagaContextSchema = z.object({
  name: z.string(),
  sagaWorkflowId: z.string(),
  repo: z.string(),
  base: z.string(),
  goal: z.string(),
  sagaDir: z.string(),
  worktreeRoot: z.string(),
  hostQueue: z.string(),
  flags: FlagsResultSchema,
  executionMode: z.enum(['subagents', 'inline']),
  settings: RunSettingsSchema,
  agent: z.string().nullable(),
  /** The issue the saga came from (`SagaInput.source`): the planner reads its request; absent: typed. */
  source: IntakeSourceSchema.optional(),
});
export type SagaContext = z.infer<typeof SagaContextSchema>;
