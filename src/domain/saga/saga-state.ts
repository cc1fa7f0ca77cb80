/**
 * The saga's state as it crosses runs: a versioned schema with a migration from each older version. The
 * saga workflow continues as new from this state at phase boundaries, and `saga continue` starts a new run
 * from it when the current code cannot replay a run's history, so a saga crosses an upgrade by its state,
 * never by replaying old code (README: Versioning). Pure; also runs in workflow code.
 */
import { z } from 'zod';
import { DEFAULT_HEARTBEAT_TIMEOUT, DEFAULT_SAGA_CONFIG, handoffSettings } from '../config/config';
import { parseDuration } from '../config/units';
import { EnvironmentSchema } from '../planning/environment';
import { CorrectableDecisionSchema } from '../planning/memory';
import { PlanSchema } from '../plan';
import { ReconciliationSchema } from '../contract/reconciliation';
import { WatchMemorySchema } from '../delivery/watch-rules';
import { SagaContextSchema } from './saga-input';
import {
  mergeLiveProgress,
  reduceProgress,
  SAGA_LOG_KEEP,
  type LiveProgress,
  type ProgressView,
} from './phase-progress';
import {
  AnswerSchema,
  ExitResultSchema,
  InteractionSchema,
  MilestoneStateSchema,
  PullRequestStatusSchema,
  UsageSchema,
  type ProgressEvent,
} from '../contract/state';
import { zodIssueLines } from '../text/zod-errors';

/** Bump with a migration below whenever the state's shape changes. */
export const SAGA_STATE_VERSION = 2;

export { SAGA_LOG_KEEP };

export const SagaStateSchema = z.object({
  version: z.literal(SAGA_STATE_VERSION),
  ctx: SagaContextSchema,
  executionModeLabel: z.string(),
  lanes: z.number().int().positive(),
  plan: PlanSchema,
  /** The approved plan's version (SAGA.md's), as `saga status` shows it; null when not known. */
  planVersion: z.number().int().positive().nullable(),
  problem: z.string(),
  environment: EnvironmentSchema.nullable(),
  milestones: z.array(MilestoneStateSchema),
  round: z.number().int().positive(),
  hub: z.object({ pending: z.array(InteractionSchema), answered: z.array(AnswerSchema) }),
  log: z.array(z.string()),
  usage: UsageSchema,
  /**
   * When the host last said it has nowhere to notify (ms since the epoch; null: it has, or was not asked).
   * Optional: states written before it simply ask again.
   */
  noChatSince: z.number().nullable().optional(),
  /** What the latest `saga continue` found (optional: states written before it have none). */
  reconciliation: ReconciliationSchema.nullable().optional(),
  /** The latest final validation's results (absent before it ran, and in states of older code). */
  exitResults: z.array(ExitResultSchema).optional(),
  /** Autonomous decisions the user may correct at acceptance. Optional: older states have none to offer. */
  decisions: z.array(CorrectableDecisionSchema).optional(),
  /** The saga's pull requests (`delivery: pr`); absent with `delivery: local` and in older states. */
  pullRequests: z.array(PullRequestStatusSchema).optional(),
  /** What the delivery watches did (failures and comments handled, fix tasks), kept across rounds. */
  deliveryMemory: WatchMemorySchema.optional(),
});
export type SagaState = z.infer<typeof SagaStateSchema>;

type Migration = (state: Record<string, unknown>) => Record<string, unknown>;
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

/** Each entry turns a state of version N into one of version N + 1. */
const MIGRATIONS: Record<number, Migration> = {
  /**
   * Version 1, unnumbered (0.1.0 before state versions): run settings may lack the heartbeat timeout, the
   * handoff limits, `pass_env` and `budget.on_exhausted`, which came later; they get the defaults. The
   * plan's version was not kept.
   */
  1: (v1) => {
    const ctx = record(v1.ctx);
    const settings = record(ctx.settings);
    const budget = record(settings.budget);
    return {
      ...v1,
      version: 2,
      planVersion: null,
      ctx: {
        ...ctx,
        settings: {
          ...settings,
          heartbeatTimeoutMs: settings.heartbeatTimeoutMs ?? parseDuration(DEFAULT_HEARTBEAT_TIMEOUT),
          handoff: settings.handoff ?? handoffSettings(DEFAULT_SAGA_CONFIG),
          passEnv: settings.passEnv ?? [],
          budget: { ...budget, onExhausted: budget.onExhausted ?? 'finish' },
        },
      },
    };
  },
};

export class SagaStateError extends Error {
  override name = 'SagaStateError';
}

/** A state of this or any older version as the current version; an error naming what is wrong otherwise. */
export function migrateSagaState(raw: unknown): SagaState {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new SagaStateError('saga state: expected an object');
  let state = raw as Record<string, unknown>;
  const from = state.version === undefined ? 1 : state.version;
  if (typeof from !== 'number' || !Number.isInteger(from) || from < 1)
    throw new SagaStateError(
      `saga state: version must be a whole number from 1, got ${JSON.stringify(from)}`,
    );
  if (from > SAGA_STATE_VERSION)
    throw new SagaStateError(
      `saga state: version ${from} was written by newer code (this code knows up to ${SAGA_STATE_VERSION}); upgrade saga`,
    );
  for (let version = from; version < SAGA_STATE_VERSION; version++) state = MIGRATIONS[version]!(state);
  const parsed = SagaStateSchema.safeParse(state);
  if (!parsed.success)
    throw new SagaStateError(
      `saga state (version ${from}): ${zodIssueLines(parsed.error, 'state').join('; ')}`,
    );
  return parsed.data;
}

/**
 * A run's starting state with the progress its children reported since folded in (oldest first, each with
 * the time it was reported): what the saga knew, read from its history without replaying its code. A
 * `live` item is an implementation phase's own view (its result, or its running state): it replaces the
 * task states and usage, and its log joins the saga's.
 */
export function withReportedProgress(
  state: SagaState,
  reported: readonly ({ at: string; event: ProgressEvent } | { live: LiveProgress })[],
): SagaState {
  let view: ProgressView = {
    milestones: state.milestones,
    usage: state.usage,
    planSummary: null,
    ...(state.pullRequests ? { pullRequests: state.pullRequests } : {}),
  };
  let log = [...state.log];
  for (const item of reported) {
    if ('live' in item) {
      const merged = mergeLiveProgress({ ...view, log }, item.live);
      view = { ...view, milestones: merged.milestones, usage: merged.usage };
      log = merged.log;
      continue;
    }
    const next = reduceProgress(view, item.event);
    view = next.view;
    for (const line of next.log) log.unshift(`${item.at} ${line}`);
  }
  return {
    ...state,
    milestones: view.milestones,
    usage: view.usage,
    ...(view.pullRequests ? { pullRequests: view.pullRequests } : {}),
    log: log.slice(0, SAGA_LOG_KEEP),
  };
}
