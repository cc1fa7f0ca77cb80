/**
 * The fleet's decisions between task delegations (docs/PROCEDURE.md §3, §4.5, §7.4): where a run taken over from an
 * earlier one starts, how a task's report is judged, and what the user is asked when a milestone keeps
 * failing integration. Pure, for the implementation workflow.
 */
import type { PlanTask } from '../plan';
import type { Plan } from '../plan';
import type { Answer, InteractionRequest, MilestoneState, SpecChange } from '../contract/state';
import { initialMilestones, noChangesBlock, type TaskReport } from './fleet';

/**
 * The blocked streak after the user answered for a task: one more blocked delegation goes back to them.
 * Before that, a task is re-delegated with its retained context, then with its spec adjusted.
 */
export const ASKED_STREAK = 2;

/** Failed integrations of one milestone re-delegated without asking; after that the user decides. */
export const INTEGRATION_REDOS = 2;

/** Past this many events a run continues as new between milestones (well before the server's warnings). */
export const HISTORY_SOFT_LIMIT = 500;

/**
 * Milestones carried over from an earlier run keep their state; a task or integration that was in flight
 * in a run that died is simply done again (idempotent steps).
 */
export function resumedMilestones(carried: readonly MilestoneState[]): MilestoneState[] {
  return carried.map((m) => ({
    ...m,
    status: m.status === 'integrating' ? ('running' as const) : m.status,
    tasks: m.tasks.map((t) => (t.status === 'running' ? { ...t, status: 'pending' as const } : t)),
  }));
}

/** The plan's milestones the carried ones do not have yet, in their initial state. */
export function addedMilestones(
  sagaName: string,
  plan: Plan,
  known: readonly MilestoneState[],
): MilestoneState[] {
  return initialMilestones(sagaName, plan).filter((m) => !known.some((k) => k.id === m.id));
}

/** A spec change from the user's answer (its text is the change). */
export const specChangeOf = (source: SpecChange['source'], answer: Answer): SpecChange => ({
  source,
  by: answer.user,
  at: answer.answeredAt,
  text: answer.text ?? '',
});

/**
 * The report as the fleet takes it (null when the child failed without one): a fix that changed nothing is
 * blocked like any other blocked outcome (re-delegated, then escalated).
 */
export function judgedReport(
  report: TaskReport | null,
  taskSpec: Pick<PlanTask, 'requires_changes'> | undefined,
  changedBefore: readonly string[],
): TaskReport | null {
  if (!report) return null;
  const noChanges = taskSpec ? noChangesBlock(taskSpec, changedBefore, report) : null;
  return noChanges ? { ...report, status: 'blocked' as const, reason: noChanges } : report;
}

/** What an answered escalation leaves the task's next delegation: the user's note, and the evidence unless the spec changed. */
export function retainedAfterEscalation(
  answer: Pick<Answer, 'choice' | 'text'>,
  evidence: string[],
): { evidence: string[]; notes: string[] } {
  const note = answer.text ?? '';
  const edit = answer.choice === 'edit';
  return { evidence: edit ? [] : evidence, notes: note && !edit ? [note] : [] };
}

/** The question after a milestone failed integration more than INTEGRATION_REDOS times: retry or abort. */
export function integrationEscalation(
  milestone: number,
  round: number,
  failures: number,
  redelegate: readonly { ref: string; note: string }[],
): InteractionRequest {
  const why = (redelegate[0]?.note ?? '').replace(/\.$/, '');
  return {
    id: `esc-m${milestone}-integration-r${round}-${failures}`,
    kind: 'escalation',
    prompt: `Milestone ${milestone} failed integration ${failures} times: ${why}. Re-delegate ${redelegate.map((r) => r.ref).join(', ')} again (optionally with a note in --text) or abort?`,
    options: ['retry', 'abort'],
    recommended: 0,
  };
}
