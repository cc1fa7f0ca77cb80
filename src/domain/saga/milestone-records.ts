/**
 * Integrated milestones leave the carried state: a saga of thousands of tasks would otherwise carry every
 * finished task's state (about 650 bytes each) through every continue-as-new, result and query, up to
 * Temporal's 2 MB payload limit. An integrated milestone keeps its own line and the tasks that did not land
 * (skipped or blocked: acceptance lists them); all its task states are in a file of the saga directory,
 * which status readers put back (`expandMilestone`). Pure; also runs in workflow code.
 */
import { z } from 'zod';
import { milestoneRecordFile } from '../contract/saga-dir';
import { TASK_STATUSES, TaskStateSchema, type MilestoneState, type TaskState } from '../contract/state';

/** The record file's content: the milestone's task states when it was integrated. */
export const MilestoneRecordSchema = z.object({
  milestone: z.number().int(),
  tasks: z.array(TaskStateSchema),
});
export type MilestoneRecord = z.infer<typeof MilestoneRecordSchema>;

/**
 * The record in `raw` (a record file's JSON), or null when it is not one: its milestone and each task's id
 * and status checked, the rest taken as written. The record activity writes it from the workflow's validated
 * state; parsing every task of a 1,000-task saga with the task schema cost `saga status` ~100 ms, and even
 * a two-field zod check ~15 ms, so this is a plain loop.
 */
export function readMilestoneRecord(raw: unknown): MilestoneRecord | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { milestone, tasks } = raw as { milestone?: unknown; tasks?: unknown };
  if (!Number.isInteger(milestone) || !Array.isArray(tasks)) return null;
  const statuses: readonly unknown[] = TASK_STATUSES;
  for (const task of tasks as unknown[]) {
    const { id, status } = (task ?? {}) as { id?: unknown; status?: unknown };
    if (typeof id !== 'string' || !statuses.includes(status)) return null;
  }
  return raw as MilestoneRecord;
}

export const isRecorded = (m: MilestoneState): boolean => m.record !== undefined;

/**
 * A task that did not land as the carried state keeps it: what acceptance and the scheduler read (its ref,
 * status and reason); the rest of its state is in the record.
 */
const slimTask = (t: TaskState): TaskState => ({
  ...t,
  evidence: [],
  changedFiles: [],
  worktree: null,
  usage: undefined,
  agent: undefined,
  specChanges: undefined,
  dependsOn: undefined,
});

/** The milestone as the carried state keeps it once its record file is written. */
export function compactMilestone(m: MilestoneState): MilestoneState {
  if (m.record) return m;
  return {
    ...m,
    tasks: m.tasks.filter((t) => t.status !== 'integrated').map(slimTask),
    record: {
      file: milestoneRecordFile(m.id),
      tasks: m.tasks.length,
      integrated: m.tasks.filter((t) => t.status === 'integrated').length,
    },
  };
}

/** The milestone with its task states from its record (as it was before compacting: none change after). */
export function expandMilestone(m: MilestoneState, record: MilestoneRecord): MilestoneState {
  const { record: _ref, ...rest } = m;
  return { ...rest, tasks: record.tasks };
}

/** Milestone ids whose integrated tasks are only in their record (the scheduler counts them as done). */
export const recordedMilestoneIds = (milestones: readonly MilestoneState[]): Set<number> =>
  new Set(milestones.filter(isRecorded).map((m) => m.id));

const FINISHED: readonly TaskState['status'][] = ['passed', 'integrated', 'skipped'];

/** Tasks that finished (passed, integrated or skipped), those only in a milestone's record included. */
export const finishedTaskCount = (milestones: readonly MilestoneState[]): number =>
  milestones.reduce(
    (sum, m) => sum + (m.record?.integrated ?? 0) + m.tasks.filter((t) => FINISHED.includes(t.status)).length,
    0,
  );
