/**
 * A plan of three independent tasks, each of which leaves a stamp (`stamps/1-<id>.json`: its task, start and
 * end times, written by the agent in its own worktree so it lands on the task's branch), and the peak number
 * of runs that overlapped, measured from those stamps: how the fleet tests see lanes run at once.
 */
import { git, planTask } from './fleet-saga';

export const STAMP_TASKS = [1, 2, 3];
export const stampFile = (id: number): string => `stamps/1-${id}.json`;
const ALL_STAMPS = STAMP_TASKS.map((id) => `test -f ${stampFile(id)}`).join(' && ');

/** The three-task plan; `scope` is each task's scope (the planned one when absent). */
export const stampsPlan = (name: string, scope?: string) => ({
  name,
  problem: 'Three independent stamps.',
  scope: { in: ['stamps/'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'every stamp is there', check: ALL_STAMPS }],
  milestones: [
    {
      id: 1,
      slug: 'stamps',
      title: 'Stamps',
      depends_on: [],
      goal: 'One stamp per task.',
      validation: [{ text: 'every stamp is there', check: ALL_STAMPS }],
      tasks: STAMP_TASKS.map((id) => ({
        ...planTask(id, `stamp-${id}`, [stampFile(id)], `test -f ${stampFile(id)}`),
        ...(scope ? { scope } : {}),
      })),
    },
  ],
});

/** Each task's stamp as it landed on `branch`. */
export const readStamps = <S extends { task: string; start: number; end: number }>(
  repo: string,
  branch: string,
): S[] => STAMP_TASKS.map((id) => JSON.parse(git(repo, 'show', `${branch}:${stampFile(id)}`)) as S);

/** The most runs under way at one moment: for each run's start, how many runs had started and not ended. */
export const peakConcurrency = (stamps: readonly { start: number; end: number }[]): number =>
  Math.max(...stamps.map((s) => stamps.filter((o) => o.start <= s.start && s.start < o.end).length));
