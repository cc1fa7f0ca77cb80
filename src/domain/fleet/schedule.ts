/**
 * Which tasks run when: the implementation workflow's scheduler, plus the ideal-makespan figures the
 * benchmark compares against. Pure and deterministic (imported by workflow code): the same input, in any
 * order, gives the same answer.
 */
import { z } from 'zod';
import { parseTaskRef } from '../contract/naming';

export const SchedTaskStatusSchema = z.enum(['pending', 'running', 'done', 'blocked', 'skipped']);
export const SchedTaskSchema = z.object({
  ref: z.string(), // "1.2"
  milestone: z.number().int(),
  dependsOn: z.array(z.string()),
  owns: z.array(z.string()),
  status: SchedTaskStatusSchema,
});
export type SchedTask = z.infer<typeof SchedTaskSchema>;
export type SchedTaskStatus = z.infer<typeof SchedTaskStatusSchema>;

/** A dependency in one of these states no longer holds its dependents back. */
const SATISFIED: ReadonlySet<SchedTaskStatus> = new Set(['done', 'skipped']);

// ---------------------------------------------------------------------------------------------
// Ownership

const GLOB_CHARS = /[*?[{]/;

/**
 * Canonical form of an owned path: no "./", no duplicate or trailing slashes. A glob is cut back to the
 * directory before its first wildcard, so "src/*.js" claims "src" (conservative: it may serialise more
 * than needed, never less). The repo root ("", ".", "./") becomes "" and overlaps everything.
 */
export function normaliseOwnedPath(path: string): string {
  const segments = path
    .trim()
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  const firstGlob = segments.findIndex((s) => GLOB_CHARS.test(s));
  return (firstGlob === -1 ? segments : segments.slice(0, firstGlob)).join('/');
}

function pathsOverlap(a: string, b: string): boolean {
  return a === '' || b === '' || a === b || b.startsWith(`${a}/`) || a.startsWith(`${b}/`);
}

/** True when some path of `a` equals, contains or lies inside some path of `b` ("src" vs "src/a.js"). */
export function ownsOverlap(a: string[], b: string[]): boolean {
  const left = a.map(normaliseOwnedPath);
  const right = b.map(normaliseOwnedPath);
  return left.some((p) => right.some((q) => pathsOverlap(p, q)));
}

// ---------------------------------------------------------------------------------------------
// Plan order

function planPosition(ref: string): { milestone: number; task: number } {
  const parsed = parseTaskRef(ref);
  if (!parsed) throw new Error(`Invalid task ref '${ref}': expected "<milestone>.<task>" like "1.2".`);
  return parsed;
}

/** Milestone, then task number, compared as numbers ("1.2" before "1.10"). */
export function comparePlanOrder(a: string, b: string): number {
  const pa = planPosition(a);
  const pb = planPosition(b);
  return pa.milestone - pb.milestone || pa.task - pb.task;
}

// ---------------------------------------------------------------------------------------------
// Ready tasks

function indexTasks(tasks: SchedTask[]): Map<string, SchedTask> {
  const byRef = new Map<string, SchedTask>();
  for (const task of tasks) {
    const { milestone } = planPosition(task.ref);
    if (milestone !== task.milestone) {
      throw new Error(`Task ${task.ref} says milestone ${task.milestone}; its ref says ${milestone}.`);
    }
    if (byRef.has(task.ref)) throw new Error(`Task ${task.ref} appears twice in the schedule.`);
    byRef.set(task.ref, task);
  }
  for (const task of tasks) {
    for (const dep of task.dependsOn) {
      if (!byRef.has(dep)) throw new Error(`Task ${task.ref} depends on unknown task '${dep}'.`);
    }
  }
  return byRef;
}

function assertLanes(lanes: number): void {
  if (!Number.isInteger(lanes) || lanes < 1) {
    throw new Error(`Invalid lane count ${lanes}: expected an integer of at least 1.`);
  }
}

/**
 * The refs to start now: pending tasks whose dependencies are all done or skipped, in plan order, skipping
 * any whose owned paths overlap a running task or a task picked earlier in this call, at most
 * `lanes - running` of them. A blocked dependency keeps its dependents waiting. `tasks` must hold every
 * task a dependency can name (earlier milestones' tasks included, as 'done').
 */
export function readyTasks(tasks: SchedTask[], lanes: number): string[] {
  assertLanes(lanes);
  const byRef = indexTasks(tasks);
  const running = tasks.filter((t) => t.status === 'running');
  let free = lanes - running.length;
  const claimed = running.flatMap((t) => t.owns);
  const picked: string[] = [];
  const candidates = tasks
    .filter((t) => t.status === 'pending')
    .sort((a, b) => comparePlanOrder(a.ref, b.ref));
  for (const task of candidates) {
    if (free <= 0) break;
    const depsMet = task.dependsOn.every((dep) => SATISFIED.has(byRef.get(dep)!.status));
    if (!depsMet || ownsOverlap(task.owns, claimed)) continue;
    picked.push(task.ref);
    claimed.push(...task.owns);
    free -= 1;
  }
  return picked;
}

// ---------------------------------------------------------------------------------------------
// Topological orders

/** Kahn's algorithm; among the nodes free to go next, `compare` picks. Errors name the cycle's members. */
function topologicalOrder<K>(
  nodes: K[],
  depsOf: (node: K) => K[],
  compare: (a: K, b: K) => number,
  describe: (node: K) => string,
): K[] {
  const waitingOn = new Map<K, number>();
  const dependents = new Map<K, K[]>(nodes.map((n) => [n, []]));
  for (const node of nodes) {
    const deps = [...new Set(depsOf(node))];
    waitingOn.set(node, deps.length);
    for (const dep of deps) dependents.get(dep)!.push(node);
  }
  const free = nodes.filter((n) => waitingOn.get(n) === 0);
  const order: K[] = [];
  while (free.length > 0) {
    free.sort(compare);
    const next = free.shift()!;
    order.push(next);
    for (const dependent of dependents.get(next)!) {
      const left = waitingOn.get(dependent)! - 1;
      waitingOn.set(dependent, left);
      if (left === 0) free.push(dependent);
    }
  }
  if (order.length < nodes.length) {
    const stuck = nodes.filter((n) => !order.includes(n)).sort(compare);
    throw new Error(`Dependency cycle among ${stuck.map(describe).join(', ')}.`);
  }
  return order;
}

/** Milestone ids in an order that respects `dependsOn`, lowest id first among equals. */
export function milestoneOrder(milestones: { id: number; dependsOn: number[] }[]): number[] {
  const ids = new Set<number>();
  for (const m of milestones) {
    if (ids.has(m.id)) throw new Error(`Milestone ${m.id} appears twice.`);
    ids.add(m.id);
  }
  const depsById = new Map(milestones.map((m) => [m.id, m.dependsOn]));
  for (const m of milestones) {
    for (const dep of m.dependsOn) {
      if (!ids.has(dep)) throw new Error(`Milestone ${m.id} depends on unknown milestone ${dep}.`);
    }
  }
  return topologicalOrder(
    [...ids],
    (id) => depsById.get(id)!,
    (a, b) => a - b,
    (id) => `milestone ${id}`,
  );
}

/**
 * The order to merge one milestone's task branches: dependencies first, lowest task number among equals.
 * Dependencies on other milestones' tasks are ignored: those were integrated earlier.
 */
export function mergeOrder(tasks: Pick<SchedTask, 'ref' | 'dependsOn'>[]): string[] {
  const milestones = new Set(tasks.map((t) => planPosition(t.ref).milestone));
  if (milestones.size > 1) {
    throw new Error(
      `mergeOrder takes the tasks of one milestone, got milestones ${[...milestones].join(', ')}.`,
    );
  }
  const depsByRef = new Map<string, string[]>();
  for (const t of tasks) {
    if (depsByRef.has(t.ref)) throw new Error(`Task ${t.ref} appears twice.`);
    depsByRef.set(t.ref, t.dependsOn);
  }
  return topologicalOrder(
    [...depsByRef.keys()],
    (ref) => depsByRef.get(ref)!.filter((dep) => depsByRef.has(dep)),
    comparePlanOrder,
    (ref) => `task ${ref}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Makespan figures for the benchmark

type Durations = Record<string, number>;
type Deps = Record<string, string[]>;

function checkDurations(durations: Durations, deps: Deps): string[] {
  const refs = Object.keys(durations).sort(comparePlanOrder);
  for (const ref of refs) {
    const d = durations[ref];
    if (!Number.isFinite(d) || d < 0)
      throw new Error(`Duration of task ${ref} must be a number >= 0, got ${d}.`);
  }
  for (const [ref, list] of Object.entries(deps)) {
    if (!(ref in durations)) throw new Error(`Dependencies given for task ${ref}, which has no duration.`);
    for (const dep of list) {
      if (!(dep in durations)) throw new Error(`Task ${ref} depends on unknown task '${dep}'.`);
    }
  }
  return refs;
}

/** The longest chain of dependent durations: no schedule, however many lanes, finishes sooner. */
export function criticalPathLength(durations: Durations, deps: Deps): number {
  const refs = checkDurations(durations, deps);
  const order = topologicalOrder(
    refs,
    (ref) => deps[ref] ?? [],
    comparePlanOrder,
    (ref) => `task ${ref}`,
  );
  const finish = new Map<string, number>();
  for (const ref of order) {
    const start = Math.max(0, ...(deps[ref] ?? []).map((dep) => finish.get(dep)!));
    finish.set(ref, start + durations[ref]);
  }
  return Math.max(0, ...finish.values());
}

/** No schedule on `lanes` lanes beats this: max(critical path, total work / lanes). */
export function lowerBoundMakespan(durations: Durations, deps: Deps, lanes: number): number {
  assertLanes(lanes);
  const total = Object.values(durations).reduce((sum, d) => sum + d, 0);
  return Math.max(criticalPathLength(durations, deps), total / lanes);
}

/**
 * The greedy list-schedule bound: the makespan `readyTasks` itself achieves when each task takes exactly
 * its duration and nothing else costs time (no owns conflicts, no overhead). Not the optimum (list
 * scheduling is within 2x of it), but the fair yardstick for the workflow's real schedule, which uses the
 * same policy; `lowerBoundMakespan` gives the bound no policy can beat.
 */
export function idealMakespan(durations: Durations, deps: Deps, lanes: number): number {
  assertLanes(lanes);
  const refs = checkDurations(durations, deps);
  criticalPathLength(durations, deps); // rejects cycles before simulating
  const tasks: SchedTask[] = refs.map((ref) => ({
    ref,
    milestone: planPosition(ref).milestone,
    dependsOn: deps[ref] ?? [],
    owns: [],
    status: 'pending',
  }));
  const finishAt = new Map<SchedTask, number>();
  let now = 0;
  for (;;) {
    for (const ref of readyTasks(tasks, lanes)) {
      const task = tasks.find((t) => t.ref === ref)!;
      task.status = 'running';
      finishAt.set(task, now + durations[ref]);
    }
    if (finishAt.size === 0) return now;
    now = Math.min(...finishAt.values());
    for (const [task, end] of finishAt) {
      if (end === now) {
        task.status = 'done';
        finishAt.delete(task);
      }
    }
  }
}
