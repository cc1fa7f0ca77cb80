/**
 * What the saga and its fleet tell the issue sync at each phase boundary (docs/PROCEDURE.md §14), built
 * from the plan and the saga's state, and how the sync merges an update into the workpad it writes. Pure:
 * the workflows only send these.
 */
import type { Plan } from '../plan';
import type { ExitResult, MilestoneState, PullRequestStatus } from '../contract/state';
import type { Workpad, WorkpadMilestone, WorkpadUpdate } from './workpad';

/** The workpad before the first update: the saga's name and phase, nothing else known. */
export const emptyWorkpad = (sagaName: string): Workpad => ({
  sagaName,
  phase: 'planning',
  problem: null,
  exitCriteria: [],
  milestones: [],
  pullRequests: [],
  costUsd: 0,
  uiUrl: null,
});

/** The update's parts replace the workpad's (parts left out stay as they were). */
export function mergeWorkpad(workpad: Workpad, update: WorkpadUpdate): Workpad {
  const defined = Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined));
  return { ...workpad, ...defined };
}

/** Whether the update ends the issue sync (the saga's end). */
export const isFinalPhase = (phase: Workpad['phase']): boolean => phase === 'done' || phase === 'cancelled';

/**
 * Every milestone and task of the plan with its state: a task the saga's state no longer lists (an
 * integrated milestone's tasks leave it for their record file) is integrated when its milestone is.
 */
export function workpadMilestones(plan: Plan, states: readonly MilestoneState[]): WorkpadMilestone[] {
  return plan.milestones.map((m) => {
    const state = states.find((s) => s.id === m.id);
    const milestoneStatus = state?.status ?? 'pending';
    return {
      id: m.id,
      title: m.title,
      status: milestoneStatus,
      tasks: m.tasks.map((t) => {
        const task = state?.tasks.find((s) => s.task === t.id);
        const status = task?.status ?? (milestoneStatus === 'integrated' ? 'integrated' : 'pending');
        return { key: `m${m.id}t${t.id}`, title: t.title, status, agent: t.agent ?? null };
      }),
    };
  });
}

const criteria = (plan: Plan, results: readonly ExitResult[] = []): Workpad['exitCriteria'] =>
  plan.exit_criteria.map((c) => ({
    id: c.id,
    text: c.text,
    result: results.find((r) => r.id === c.id)?.result ?? null,
  }));

/** The plan was approved: implementation starts with every task pending. */
export const planApprovedUpdate = (plan: Plan, problem: string): WorkpadUpdate => ({
  phase: 'implementation',
  problem,
  exitCriteria: criteria(plan),
  milestones: workpadMilestones(plan, []),
});

/** A milestone was integrated (and its PR opened, `delivery: pr`): the milestones, the PRs so far, the cost. */
export const milestoneUpdate = (
  plan: Plan,
  states: readonly MilestoneState[],
  pullRequests: readonly PullRequestStatus[],
  costUsd: number,
): WorkpadUpdate => ({
  milestones: workpadMilestones(plan, states),
  pullRequests: pullRequests.map((p) => ({
    number: p.number,
    url: p.url,
    milestone: p.milestone,
    state: p.draft && p.state === 'open' ? 'draft' : p.state,
  })),
  costUsd,
});

/** Acceptance is asked: the exit criteria with what the final validation found. */
export const reviewUpdate = (plan: Plan, results: readonly ExitResult[], costUsd: number): WorkpadUpdate => ({
  phase: 'review',
  exitCriteria: criteria(plan, results),
  costUsd,
});

/** The saga's end: the last update the issue sync writes. */
export const endUpdate = (end: 'complete' | 'cancelled', costUsd: number): WorkpadUpdate => ({
  phase: end === 'complete' ? 'done' : 'cancelled',
  costUsd,
});
