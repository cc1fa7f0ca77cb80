/** The semantic checks of a plan that zod alone cannot express: ids, references, cycles. Pure. */
import { taskRef } from '../contract/naming';
import { ownershipOverlaps } from './owns';
import type { Plan } from './schema';

/** References, duplicates, dependency cycles and ownership overlaps, as `path: problem` lines. */
export function semanticProblems(plan: Plan): string[] {
  const problems: string[] = [];
  const exitIds = new Map<string, number>();
  plan.exit_criteria.forEach((c, i) => {
    const first = exitIds.get(c.id);
    if (first !== undefined) {
      problems.push(
        `exit_criteria[${i}].id: duplicate exit criterion id "${c.id}" (also exit_criteria[${first}])`,
      );
    } else exitIds.set(c.id, i);
  });

  const milestoneIndex = new Map<number, number>();
  plan.milestones.forEach((m, i) => {
    const first = milestoneIndex.get(m.id);
    if (first !== undefined) {
      problems.push(`milestones[${i}].id: duplicate milestone id ${m.id} (also milestones[${first}])`);
    } else milestoneIndex.set(m.id, i);
  });

  plan.milestones.forEach((m, i) => {
    m.depends_on.forEach((dep, d) => {
      if (!milestoneIndex.has(dep))
        problems.push(`milestones[${i}].depends_on[${d}]: unknown milestone ${dep}`);
    });
  });
  const milestoneCycle = findCycle(
    plan.milestones.map((m) => String(m.id)),
    (id) => (plan.milestones[milestoneIndex.get(Number(id))!]?.depends_on ?? []).map(String),
  );
  if (milestoneCycle) {
    const at = milestoneIndex.get(Number(milestoneCycle[0]))!;
    problems.push(
      `milestones[${at}].depends_on: dependency cycle between milestones ${milestoneCycle.join(' -> ')}`,
    );
  }

  problems.push(...taskProblems(plan, milestoneIndex));
  return problems;
}

function taskProblems(plan: Plan, milestoneIndex: Map<number, number>): string[] {
  const problems: string[] = [];
  const taskPaths = new Map<string, string>(); // "1.2" -> "milestones[0].tasks[1]"
  plan.milestones.forEach((m, i) => {
    const seen = new Map<number, number>();
    m.tasks.forEach((t, j) => {
      const first = seen.get(t.id);
      if (first !== undefined) {
        problems.push(
          `milestones[${i}].tasks[${j}].id: duplicate task id ${t.id} in milestone ${m.id} (also milestones[${i}].tasks[${first}])`,
        );
      } else seen.set(t.id, j);
      if (!taskPaths.has(taskRef(m.id, t.id)))
        taskPaths.set(taskRef(m.id, t.id), `milestones[${i}].tasks[${j}]`);
    });
  });

  const edges = new Map<string, string[]>();
  plan.milestones.forEach((m, i) => {
    const reachable = reachableMilestones(plan, milestoneIndex, m.id);
    m.tasks.forEach((t, j) => {
      const ref = taskRef(m.id, t.id);
      const valid: string[] = [];
      t.depends_on.forEach((dep, d) => {
        const at = `milestones[${i}].tasks[${j}].depends_on[${d}]`;
        const depMilestone = Number(dep.split('.')[0]);
        if (!taskPaths.has(dep)) problems.push(`${at}: unknown task "${dep}"`);
        else if (!reachable.has(depMilestone)) {
          problems.push(
            `${at}: task "${dep}" is in milestone ${depMilestone}, which milestone ${m.id} does not depend on`,
          );
        } else valid.push(dep);
      });
      if (!edges.has(ref)) edges.set(ref, valid);
    });
    problems.push(...ownershipOverlaps(m, i));
  });

  const cycle = findCycle([...taskPaths.keys()], (ref) => edges.get(ref) ?? []);
  if (cycle)
    problems.push(
      `${taskPaths.get(cycle[0])}.depends_on: dependency cycle between tasks ${cycle.join(' -> ')}`,
    );
  return problems;
}

/** The milestone itself plus everything it depends on, transitively (cycle-safe). */
function reachableMilestones(plan: Plan, milestoneIndex: Map<number, number>, id: number): Set<number> {
  const seen = new Set<number>([id]);
  const stack = [id];
  while (stack.length) {
    const m = plan.milestones[milestoneIndex.get(stack.pop()!) ?? -1];
    for (const dep of m?.depends_on ?? []) {
      if (!seen.has(dep)) {
        seen.add(dep);
        stack.push(dep);
      }
    }
  }
  return seen;
}

/** First cycle found by depth-first search, as a closed walk (`a -> b -> a`), or undefined. */
export function findCycle(nodes: string[], next: (node: string) => string[]): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    stack.push(node);
    for (const n of next(node)) {
      if (state.get(n) === 'open') return [...stack.slice(stack.indexOf(n)), n];
      if (!state.has(n)) {
        const found = visit(n);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of nodes) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return undefined;
}
