/** Finding and summarising tasks of a valid plan. Pure. */
import { taskRef } from '../contract/naming';
import type { Plan, PlanMilestone, PlanTask } from './schema';

/** Every task ref ("1.2") in plan order: milestones as listed, tasks as listed. */
export function taskRefsInOrder(plan: Plan): string[] {
  return plan.milestones.flatMap((m) => m.tasks.map((t) => taskRef(m.id, t.id)));
}

export function findTask(plan: Plan, ref: string): { milestone: PlanMilestone; task: PlanTask } | undefined {
  const match = /^(\d+)\.(\d+)$/.exec(ref.trim());
  if (!match) return undefined;
  const milestone = plan.milestones.find((m) => m.id === Number(match[1]));
  const task = milestone?.tasks.find((t) => t.id === Number(match[2]));
  return milestone && task ? { milestone, task } : undefined;
}

export function planSummary(plan: Plan): string {
  const tasks = plan.milestones.reduce((n, m) => n + m.tasks.length, 0);
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  return [
    `${plural(plan.milestones.length, 'milestone')}, ${plural(tasks, 'task')}, ` +
      plural(plan.exit_criteria.length, 'exit criterion', 'exit criteria'),
    ...plan.milestones.map(
      (m) =>
        `  M${m.id} ${m.title} (${plural(m.tasks.length, 'task')}` +
        `${m.depends_on.length ? `; after ${m.depends_on.map((d) => `M${d}`).join(', ')}` : ''})`,
    ),
  ].join('\n');
}

/**
 * What the validation and acceptance phases read of the plan: its exit criteria and milestone ids. Their
 * children get this instead of the whole plan, which would enter each of their histories and the saga's.
 */
export interface PlanOutline {
  exit_criteria: Plan['exit_criteria'];
  milestones: Pick<PlanMilestone, 'id'>[];
}

export const planOutline = (plan: Plan): PlanOutline => ({
  exit_criteria: plan.exit_criteria,
  milestones: plan.milestones.map((m) => ({ id: m.id })),
});
