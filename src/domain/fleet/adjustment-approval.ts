/**
 * A planner's adjustment of a blocked task that changes what decides the task (its checks or its scope) is
 * a change of agreed behaviour: the user approves, edits or rejects it with the change shown; under
 * --autonomous it is decided without asking, cited in decisions.md and manifest.md, and listed at
 * acceptance. Pure, for workflow code.
 */
import type { InteractionRequest, SpecChange, TaskState } from '../contract/state';
import { describeSpecChange } from './spec-changes';
import { SPEC_EDIT_HELP } from './spec-edit';

export const ADJUSTMENT_CHOICE = { approve: 'approve', edit: 'edit', reject: 'reject' } as const;

/** The fields of an adjustment that change what the task is judged by. */
export function decidingFields(patch: SpecChange['patch']): string[] {
  return (['validation', 'scope'] as const).filter((field) => patch?.[field] !== undefined);
}

/** The question showing the planner's adjustment: approve, edit (the user's own change) or reject. */
export function adjustmentQuestion(
  task: { ref: string; key: string; title: string; delegation: number },
  blocker: string,
  change: SpecChange,
): InteractionRequest {
  const fields = decidingFields(change.patch).map((f) => (f === 'validation' ? 'checks' : f));
  return {
    id: `adj-${task.key}-d${task.delegation}`,
    kind: 'escalation',
    prompt:
      `Task ${task.ref} (${task.title}) stayed blocked in ${task.delegation - 1} delegations (${oneLine(blocker)}). ` +
      `The planner proposes to change its ${fields.join(' and ')}: ${oneLine(change.text)}. Answer approve to ` +
      `re-delegate it with this change, edit with your own change in --text (it replaces the planner's), or ` +
      `reject (the task stays blocked and you are asked what to do with it).\nEdit: ${SPEC_EDIT_HELP}.`,
    options: [ADJUSTMENT_CHOICE.approve, ADJUSTMENT_CHOICE.edit, ADJUSTMENT_CHOICE.reject],
    recommended: 0,
    textRequiredFor: [ADJUSTMENT_CHOICE.edit],
    textFormat: 'spec-edit',
  };
}

/** Why the task stays blocked when the user rejected the planner's adjustment. */
export const rejectedAdjustment = (user: string, change: SpecChange, note?: string): string =>
  `${user} rejected the planner's adjustment (${oneLine(change.text)})${note ? `: ${oneLine(note)}` : ''}`;

/** The checkpoint id an autonomous adjustment is recorded under (manifest.md's auto_picked_checkpoints). */
export const adjustmentCheckpoint = (ref: string, delegation: number): string =>
  `task-${ref}-spec-adjustment-d${delegation}`;

/** The decisions.md entry of an adjustment decided under --autonomous: what changed, why, how to override. */
export function autonomousAdjustmentEntry(
  task: { ref: string; title: string; delegation: number },
  blocker: string,
  change: SpecChange,
): { at: string; title: string; lines: string[] } {
  return {
    at: change.at,
    title: `Autonomous decision: task ${task.ref} spec adjusted without asking`,
    lines: [
      `- Change: ${oneLine(change.text)}`,
      `- Reason: task ${task.ref} (${task.title}) stayed blocked in ${task.delegation - 1} delegations: ${oneLine(blocker)}; the planner adjusted its ${decidingFields(change.patch).join(' and ')}.`,
      "- Decided by: --autonomous (a change of checks or scope is otherwise the user's to approve).",
      '- Override: report an issue at acceptance with the check you want, or run without --autonomous.',
    ],
  };
}

/** The spec changes decided under --autonomous, one line each, for the acceptance prompt. */
export function autonomousSpecChanges(
  milestones: readonly { tasks: readonly Pick<TaskState, 'id' | 'specChanges'>[] }[],
): string[] {
  const all = milestones.flatMap((m) =>
    m.tasks.flatMap((t) =>
      (t.specChanges ?? []).filter((c) => c.autonomous).map((c) => `task ${t.id}: ${describeSpecChange(c)}`),
    ),
  );
  // The prompt stays readable; decisions.md has every one.
  return all.length <= LISTED_MAX
    ? all
    : [...all.slice(0, LISTED_MAX), `${all.length - LISTED_MAX} more in decisions.md`];
}

const LISTED_MAX = 10;

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
