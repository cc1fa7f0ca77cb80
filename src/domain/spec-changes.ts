/**
 * Changes to a task's spec after planning (seed, Continuing step 5 and Phase 2 step 4): each is kept with
 * the task's state, so every later attempt and delegation works from the current spec, the task's spec file
 * shows it, and it is logged as a deviation. Pure, for workflow code.
 */
import type { PlanTask } from './plan';
import type { SpecChange, TaskState } from './state';

/** Most changes kept per task, and the longest text of one: they travel in every task's input. */
export const SPEC_CHANGES_MAX = 20;
export const SPEC_CHANGE_TEXT_MAX = 2_000;

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
const capped = (text: string): string =>
  text.length <= SPEC_CHANGE_TEXT_MAX ? text : `${text.slice(0, SPEC_CHANGE_TEXT_MAX - 1)}…`;

/** The task's changes with one more (the oldest dropped past the cap, so the newest always count). */
export function withSpecChange(task: Pick<TaskState, 'specChanges'>, change: SpecChange): SpecChange[] {
  const next = { ...change, text: capped(change.text.trim()) };
  return [...(task.specChanges ?? []), next].slice(-SPEC_CHANGES_MAX);
}

/** How a change reads in the agent's task, the spec file and the log. */
export const describeSpecChange = (change: SpecChange): string =>
  `${oneLine(change.text)} (${SOURCE_LABEL[change.source]} by ${change.by}, ${change.at.slice(0, 16).replace('T', ' ')})`;

const SOURCE_LABEL: Record<SpecChange['source'], string> = {
  'spec-gap': 'spec gap answered',
  edit: 'spec edited',
  adjusted: 'spec adjusted',
};

/** The task as its agent and reviewer see it: the planned spec plus the changes agreed since. */
export function currentTaskSpec(
  spec: PlanTask,
  changes: readonly SpecChange[] | undefined,
): PlanTask & { spec_changes?: string[] } {
  if (!changes?.length) return spec;
  return { ...spec, spec_changes: changes.map(describeSpecChange) };
}

/** The log line of a change: lines starting with "Deviation: " are listed under Decisions & Deviations. */
export const specChangeDeviation = (ref: string, change: SpecChange): string =>
  `Deviation: task ${ref} spec changed: ${describeSpecChange(change)}`;

/** The decisions.md entry of a change the user made with an `edit` answer. */
export const specEditDecision = (
  task: { id: string; title: string },
  change: SpecChange,
  interactionId: string,
): { at: string; title: string; lines: string[] } => ({
  at: change.at,
  title: specChangeDeviation(task.id, change),
  lines: [
    `- Task ${task.id} (${task.title}) was escalated; ${change.by} answered ${interactionId} with edit.`,
    '- The change is in the task spec file and in every later attempt of the task.',
  ],
});
