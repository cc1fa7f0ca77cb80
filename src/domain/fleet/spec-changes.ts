/**
 * Changes to a task's spec after planning (docs/PROCEDURE.md §3.12, §7.5): each is kept with
 * the task's state, so every later attempt and delegation works from the current spec, the task's spec file
 * shows it, and it is logged as a deviation. Pure, for workflow code.
 */
import type { Plan, PlanMilestone, PlanTask } from '../plan';
import type { SpecChange, TaskState } from '../contract/state';

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

/**
 * The task as its agent, reviewer and checks see it: the planned spec with every adjustment's new field
 * values applied in order, plus the list of changes agreed since.
 */
export function currentTaskSpec(
  spec: PlanTask,
  changes: readonly SpecChange[] | undefined,
): PlanTask & { spec_changes?: string[] } {
  if (!changes?.length) return spec;
  const patched = changes.reduce<PlanTask>((task, c) => ({ ...task, ...c.patch }), spec);
  return { ...patched, spec_changes: changes.map(describeSpecChange) };
}

/** What the saga may adjust in a blocked task's spec; ids, owned files and dependencies stay as agreed. */
export const ADJUSTABLE_FIELDS = [
  'scope',
  'interfaces',
  'validation_method',
  'validation',
  'evidence',
] as const;
type AdjustableField = (typeof ADJUSTABLE_FIELDS)[number];

/** The planner's `revise` input for adjusting one task: a valid plan of that task alone. */
export function adjustmentPlan(
  plan: Pick<Plan, 'problem' | 'exit_criteria'>,
  milestone: Pick<PlanMilestone, 'id' | 'slug' | 'title' | 'goal'>,
  task: PlanTask,
): Plan {
  const { spec_changes: _listed, ...spec } = task as PlanTask & { spec_changes?: string[] };
  const { id, slug, title, goal } = milestone;
  return {
    problem: plan.problem,
    scope: { in: [], out: [], delegated: [] },
    exit_criteria: plan.exit_criteria,
    milestones: [
      { id, slug, title, goal, depends_on: [], validation: [], tasks: [{ ...spec, depends_on: [] }] },
    ],
  };
}

/** The note the planner revises with: what blocked the task, and what it may change. */
export const adjustmentNote = (
  task: { ref: string; title: string },
  blocker: string,
  delegations: number,
): string =>
  `Task ${task.ref} (${task.title}) ended blocked in ${delegations} delegations in a row: ${oneLine(blocker)}. ` +
  `Adjust this task's spec (${ADJUSTABLE_FIELDS.join(', ')}) so that a worker can finish it: make an unclear ` +
  `scope precise, correct a validation check that cannot pass as written, name the interface it needs, ` +
  `narrow a task whose agent ran out of time or hung. Keep ` +
  `ids, slugs, owned files, dependencies and the exit criteria as they are. If only the user can resolve the ` +
  `blocker (a spec gap, an external decision), return the plan unchanged.`;

/**
 * The adjustment in the planner's revised plan: the task's changed adjustable fields, or null when it
 * changed none (nothing to adjust: the user is asked). Throws when the task is missing from the answer.
 */
export function adjustmentOf(
  current: PlanTask,
  milestoneId: number,
  revised: Plan,
): SpecChange['patch'] | null {
  const task = revised.milestones.find((m) => m.id === milestoneId)?.tasks.find((t) => t.id === current.id);
  if (!task) throw new Error(`the revised plan has no task ${milestoneId}.${current.id}`);
  const patch: Partial<Pick<PlanTask, AdjustableField>> = {};
  for (const field of ADJUSTABLE_FIELDS)
    if (JSON.stringify(task[field]) !== JSON.stringify(current[field]))
      Object.assign(patch, { [field]: task[field] });
  return Object.keys(patch).length ? patch : null;
}

/** One line naming an adjustment's fields and new values, for the change's text. */
export function describeAdjustment(patch: NonNullable<SpecChange['patch']>): string {
  return Object.entries(patch)
    .map(([field, value]) =>
      field === 'validation'
        ? `validation: ${(value as { check: string }[]).map((c) => `\`${c.check}\``).join(', ')}`
        : `${field}: ${oneLine(String(value))}`,
    )
    .join('; ');
}

/** The log line of a change: lines starting with "Deviation: " are listed under Decisions & Deviations. */
export const specChangeDeviation = (ref: string, change: SpecChange): string =>
  `Deviation: task ${ref} spec changed: ${describeSpecChange(change)}`;

/** The decisions.md entry of a change: `how` says how it came about (one line). */
export const specChangeDecision = (
  task: { id: string; title: string },
  change: SpecChange,
  how: string,
): { at: string; title: string; lines: string[] } => ({
  at: change.at,
  title: specChangeDeviation(task.id, change),
  lines: [
    `- Task ${task.id} (${task.title}): ${how}`,
    '- The change is in the task spec file and in every later attempt of the task.',
  ],
});

/** How a change made at a blocked task's adjustment came about, for its decisions.md entry. */
export function adjustmentHow(blockedDelegations: number, change: SpecChange): string {
  const blocked = `blocked in ${blockedDelegations} delegations in a row`;
  if (change.source === 'edit')
    return `${blocked}; ${change.by} edited the spec in place of the planner's adjustment.`;
  if (change.autonomous)
    return `${blocked}; the planner adjusted its spec, decided under --autonomous without asking.`;
  return `${blocked}; the planner adjusted its spec${change.by === 'planner' ? '' : ` (${change.by})`}.`;
}
