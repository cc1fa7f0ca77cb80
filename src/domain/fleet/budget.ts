/**
 * The budget's rules (`budget.task_usd`, `budget.saga_usd`, `budget.on_exhausted`), in one place: what
 * counts, when a budget is exhausted, what a task is granted and may spend on its next run, when the
 * warning and the question come, what a raise means, and the reasons and lines that say so. Pure: the
 * fleet (workflows/fleet/fleet-budget.ts), the task (workflows/task/task-run.ts), the resolver, reviewer and planner
 * gates only apply them; the settings come from saga.config.yaml through `budgetSettings`.
 */
import { z } from 'zod';
import { BUDGET_ON_EXHAUSTED, type BudgetOnExhausted } from '../config/config';
import type { Answer, InteractionRequest } from '../contract/state';

/** Share of the saga budget at which one warning goes out. */
export const BUDGET_WARN_FRACTION = 0.8;

/**
 * The saga budget as a task child sees it: the limit, what the rest of the saga had spent when it was
 * sent (the child adds its own spend), and whether the fleet wants its current run stopped now.
 * Sent with the task's input and again by signal whenever the limit is crossed or raised.
 */
export const BudgetGrantSchema = z.object({
  limitUsd: z.number().nullable(),
  spentElsewhereUsd: z.number(),
  onExhausted: z.enum(BUDGET_ON_EXHAUSTED),
  stopNow: z.boolean().optional(),
});
export type BudgetGrant = z.infer<typeof BudgetGrantSchema>;

/** USD left under a limit (never negative); null when there is no limit. */
export function remainingUsd(limitUsd: number | null, spentUsd: number): number | null {
  return limitUsd === null ? null : Math.max(0, limitUsd - spentUsd);
}

/** A budget is exhausted once what it counts reaches the limit (no limit: never). */
export const isExhausted = (limitUsd: number | null, spentUsd: number): boolean =>
  limitUsd !== null && spentUsd >= limitUsd;

/** The run settings' budget from saga.config.yaml's `budget` (unset limits: none). */
export function budgetSettings(config: {
  task_usd?: number;
  saga_usd?: number;
  on_exhausted: BudgetOnExhausted;
}): { taskUsd: number | null; sagaUsd: number | null; onExhausted: BudgetOnExhausted } {
  return {
    taskUsd: config.task_usd ?? null,
    sagaUsd: config.saga_usd ?? null,
    onExhausted: config.on_exhausted,
  };
}

/**
 * The cap for one agent run: the smaller of what the task and the saga have left; null when neither has a
 * limit. Rounded down to a hundredth of a cent so a CLI never gets more than is left (to cents, what little
 * is left became a cap of 0, which Claude Code refuses as an invalid argument).
 */
export function runCapUsd(...left: (number | null)[]): number | null {
  const known = left.filter((v): v is number => v !== null);
  if (known.length === 0) return null;
  return Math.floor(Math.min(...known) * 10_000) / 10_000;
}

/** True when this spend moved past the warning share of the limit (so the warning goes out once). */
export function crossedWarning(limitUsd: number | null, beforeUsd: number, afterUsd: number): boolean {
  if (limitUsd === null) return false;
  const mark = limitUsd * BUDGET_WARN_FRACTION;
  return beforeUsd < mark && afterUsd >= mark;
}

export const budgetWarningText = (saga: string, spentUsd: number, limitUsd: number): string =>
  `Saga ${saga} has spent $${spentUsd.toFixed(2)} of its $${limitUsd} budget (${Math.round((spentUsd / limitUsd) * 100)} %). ` +
  'At the budget no new agent run starts and the saga asks whether to raise it.';

const RAISE = /^\s*(\+)?\s*\$?\s*(\d+(?:\.\d+)?)\s*$/;

/** Why a `raise` answer's text is not a budget ("12.5" = the new amount, "+5" = raise by 5), or null. */
export function budgetRaiseProblem(text: string | undefined): string | null {
  const match = RAISE.exec(text ?? '');
  if (!match || !(Number(match[2]) > 0))
    return `'${text ?? ''}' is not a budget: pass the new amount in USD (e.g. --text 20) or the raise (e.g. --text +5).`;
  return null;
}

/** The new saga limit a valid `raise` text asks for. */
export function raisedLimit(text: string, currentLimitUsd: number): number {
  const match = RAISE.exec(text);
  if (!match) throw new Error(budgetRaiseProblem(text) ?? 'not a budget');
  const amount = Number(match[2]);
  return match[1] ? currentLimitUsd + amount : amount;
}

export const budgetQuestionPrompt = (
  spentUsd: number,
  limitUsd: number,
  onExhausted: BudgetOnExhausted,
): string =>
  `The saga has spent $${spentUsd.toFixed(2)}, over its budget of $${limitUsd}. No new agent run starts until you ` +
  `raise the budget (the new amount, or +X to raise by X, in --text) or stop.` +
  (onExhausted === 'stop'
    ? ' Running agents were stopped (budget.on_exhausted: stop); their work is on their task branches.'
    : '');

export const sagaBudgetReason = (spentUsd: number, limitUsd: number): string =>
  `budget: the saga spent $${spentUsd.toFixed(2)} of $${limitUsd}; no new agent run starts`;

/** Why the task's own budget (`budget.task_usd`) ends it before another attempt; null while some is left. */
export function taskBudgetReason(spentUsd: number, taskUsd: number | null): string | null {
  return isExhausted(taskUsd, spentUsd) ? `budget: task spent $${spentUsd.toFixed(2)} of $${taskUsd}` : null;
}

/** Why a run stopped by the fleet at the saga budget (`budget.on_exhausted: stop`) ended the task. */
export const budgetStopReason = (limitUsd: number | null | undefined): string =>
  `budget: stopped at the saga budget of $${limitUsd ?? '?'} (budget.on_exhausted: stop)`;

/** Why a quality-locked review ended at the budget: the saga's (when it has one), else the task's. */
export const reviewBudgetReason = (grant: BudgetGrant | null, spentUsd: number): string =>
  grant?.limitUsd != null
    ? sagaBudgetReason(grant.spentElsewhereUsd + spentUsd, grant.limitUsd)
    : 'budget: the task budget is spent';

/** What the next delegation of a task the saga budget ended is told. */
export const BUDGET_STOPPED_NOTE =
  'The previous delegation was ended by the saga budget; its work is committed on your branch: continue from it.';

// A task's view: the grant counts what the rest of the saga had spent, the task adds its own spend.

/** What the saga budget leaves a task that has spent `ownUsd` itself (null: no saga budget). */
export const sagaLeftUsd = (grant: BudgetGrant | null, ownUsd: number): number | null =>
  grant ? remainingUsd(grant.limitUsd, grant.spentElsewhereUsd + ownUsd) : null;

/** The cap of a task's next agent run: the least of what the task and the saga budgets leave. */
export const taskRunCapUsd = (taskUsd: number | null, grant: BudgetGrant | null, ownUsd: number) =>
  runCapUsd(remainingUsd(taskUsd, ownUsd), sagaLeftUsd(grant, ownUsd));

/** Why no further run of the task may start at the saga budget; null while some is left. */
export function sagaSpentReason(grant: BudgetGrant | null, ownUsd: number): string | null {
  const left = sagaLeftUsd(grant, ownUsd);
  const limit = grant?.limitUsd;
  if (left === null || left > 0 || limit == null) return null;
  return sagaBudgetReason(grant!.spentElsewhereUsd + ownUsd, limit);
}

// The fleet's view: finished work plus what running tasks have reported.

/** The budget as one task sees it: what everything else has spent, and whether its run is stopped now. */
export const budgetGrant = (
  limitUsd: number | null,
  spentUsd: number,
  ownRunningUsd: number,
  onExhausted: BudgetOnExhausted,
  stopNow = false,
): BudgetGrant => ({
  limitUsd,
  spentElsewhereUsd: spentUsd - ownRunningUsd,
  onExhausted,
  ...(stopNow ? { stopNow } : {}),
});

/** True when this spend reached the limit from under it: the question is asked once per crossing. */
export const crossedLimit = (limitUsd: number | null, beforeUsd: number, afterUsd: number): boolean =>
  isExhausted(limitUsd, afterUsd) && beforeUsd < limitUsd!;

/** At a crossing, running agents are stopped only under `budget.on_exhausted: stop`. */
export const stopsRunningTasks = (crossed: boolean, onExhausted: BudgetOnExhausted): boolean =>
  crossed && onExhausted === 'stop';

/** The id of the round's 80 % notice (one per limit). */
export const budgetWarningId = (round: number, limitUsd: number): string =>
  `budget-warning-r${round}-${Math.round(limitUsd * 100)}`;

/** Each budget question its own id: a raise that is still not enough asks again (`n`: the asker's count). */
export const budgetQuestionId = (round: number, spentUsd: number, limitUsd: number, n: number): string =>
  `budget-r${round}-${Math.round(spentUsd * 100)}-of-${Math.round(limitUsd * 100)}-q${n}`;
export const planningBudgetQuestionId = (spentUsd: number, limitUsd: number, n: number): string =>
  `budget-planning-${Math.round(spentUsd * 100)}-of-${Math.round(limitUsd * 100)}-q${n}`;

/** The log lines of an answered budget question and of a raise. */
export const budgetAnswerLine = (answer: Answer): string =>
  `Budget question answered by ${answer.user}: ${answer.choice}${answer.text ? ` ${answer.text}` : ''}`;
export const budgetRaisedLine = (limitUsd: number): string => `Saga budget is now $${limitUsd}`;

/** The median of task costs (USD); null when there are none. */
export function medianUsd(costs: number[]): number | null {
  if (costs.length === 0) return null;
  const sorted = [...costs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Written at the end of each saga (complete or cancelled) to `<sagaDir>/costs.json`: what its tasks cost. */
export const SagaCostRecordSchema = z.object({
  saga: z.string(),
  finishedAt: z.string(),
  totalUsd: z.number(),
  /** Cost per task that ran an agent (id → USD). */
  tasks: z.record(z.string(), z.number()),
});
export type SagaCostRecord = z.infer<typeof SagaCostRecordSchema>;
/** The one place for the record's name: `$SAGA_HOME/<name>/costs.json`; later plans read their siblings'. */
export const SAGA_COST_RECORD_FILE = 'costs.json';

/** The record of a finished saga from its status: every task whose runs cost something. */
export function sagaCostRecord(
  status: {
    name: string;
    usage?: { costUsd: number } | null;
    milestones: { tasks: { id: string; usage?: { costUsd: number } | null }[] }[];
  },
  finishedAt: string,
): SagaCostRecord {
  const tasks: Record<string, number> = {};
  for (const m of status.milestones)
    for (const t of m.tasks) if (t.usage && t.usage.costUsd > 0) tasks[t.id] = t.usage.costUsd;
  return { saga: status.name, finishedAt, totalUsd: status.usage?.costUsd ?? 0, tasks };
}

export interface PlanEstimate {
  tasks: number;
  medianTaskUsd: number;
  totalUsd: number;
  /** How many earlier sagas it is based on (those with at least one task cost). */
  sagas: number;
}

/** tasks × the median task cost of earlier sagas; null when no earlier saga recorded a task cost. */
export function planEstimate(tasks: number, earlier: SagaCostRecord[]): PlanEstimate | null {
  const withCosts = earlier.filter((r) => Object.keys(r.tasks).length > 0);
  const median = medianUsd(withCosts.flatMap((r) => Object.values(r.tasks)));
  if (median === null) return null;
  return { tasks, medianTaskUsd: median, totalUsd: tasks * median, sagas: withCosts.length };
}

export const planEstimateText = (e: PlanEstimate): string =>
  `Estimated cost: ~$${e.totalUsd.toFixed(2)} (${e.tasks} task${e.tasks === 1 ? '' : 's'} × median task cost ` +
  `$${e.medianTaskUsd.toFixed(2)} of ${e.sagas} earlier saga${e.sagas === 1 ? '' : 's'}) — an estimate, not a limit.`;

/**
 * The `budget` interaction (raise / stop), the same for the fleet, the resolver and the planner: `id` must be
 * new for each question (a raise that is still not enough asks again).
 */
export const budgetInteraction = (
  id: string,
  spentUsd: number,
  limitUsd: number,
  onExhausted: BudgetOnExhausted,
): InteractionRequest => ({
  id,
  kind: 'budget',
  prompt: budgetQuestionPrompt(spentUsd, limitUsd, onExhausted),
  options: ['raise', 'stop'],
  recommended: null,
  textRequiredFor: ['raise'],
  textFormat: 'budget-amount',
});
