/**
 * What a saga is started with, and the context every phase and task workflow receives.
 * Paths are computed by the client (Node) so workflow code never touches `path` or `fs`.
 */
import { z } from 'zod';
import { BUDGET_ON_EXHAUSTED } from './budget';
import { ResolvedAgentProfileSchema } from './config';
import type { Environment } from './environment';
import { FlagsResultSchema } from './flags';
import { PlanSchema, type Plan } from './plan';
import type { Answer, Interaction, MilestoneState, Usage } from './state';

/** Settings read from saga.config.yaml by an activity at start (host-bound), then fixed in history. */
export const RunSettingsSchema = z.object({
  attempts: z.number().int().min(1),
  checkTimeoutMs: z.number().int().positive(),
  /** Heartbeat timeout of long activities; optional so settings recorded before it existed still parse. */
  heartbeatTimeoutMs: z.number().int().positive().optional(),
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
    /** Optional so settings recorded before it existed still parse (they finish). */
    onExhausted: z.enum(BUDGET_ON_EXHAUSTED).optional(),
  }),
  /** Limits of a task handoff; optional so settings recorded before it existed still parse (defaults). */
  handoff: z
    .object({
      maxFiles: z.number().int().positive(),
      maxFileBytes: z.number().int().positive(),
      skipHooks: z.boolean(),
    })
    .optional(),
  /** Worker variables checks and worktree set-up also get (`pass_env`); optional for older settings. */
  passEnv: z.array(z.string()).optional(),
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
export interface SagaContext {
  name: string;
  sagaWorkflowId: string;
  repo: string;
  base: string;
  goal: string;
  sagaDir: string;
  worktreeRoot: string;
  hostQueue: string;
  flags: SagaInput['flags'];
  executionMode: 'subagents' | 'inline';
  settings: RunSettings;
  agent: string | null;
}

/** State carried into a new run of the saga: continue-as-new between rounds, or `saga continue` after a crash. */
export interface SagaCarry {
  ctx: SagaContext;
  executionModeLabel: string;
  lanes: number;
  plan: Plan;
  problem: string;
  environment: Environment | null;
  milestones: MilestoneState[];
  round: number;
  hub: { pending: Interaction[]; answered: Answer[] };
  log: string[];
  usage: Usage;
}
