/**
 * The plan file (DESIGN.md 4.3): schema, parsing and the semantic checks zod alone cannot express
 * (references, cycles, ownership overlaps). Pure: the planning workflow validates planner output with it.
 * Nothing here throws on bad input; every problem comes back as a message naming file, path and expectation.
 */
import { z } from 'zod';
import YAML from 'yaml';
import { SAGA_NAME_PATTERN, taskRef } from './naming';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
const TASK_REF_PATTERN = /^\d+\.\d+$/;
const MAX_ERRORS = 50;

const text = z.string().trim().min(1);
/** Slugs end up in branch, folder and file names: long ones hit ENAMETOOLONG deep in a run. */
export const MAX_SLUG_LENGTH = 40;
const slug = z.string().regex(SLUG_PATTERN).max(MAX_SLUG_LENGTH);
const positiveId = z.number().int().min(1);

/** Relative, inside the repo: no absolute paths (POSIX or Windows drive) and no `..` segments. */
export function isSafeRelativePath(p: string): boolean {
  if (p.startsWith('/') || p.startsWith('\\') || /^[a-zA-Z]:/.test(p) || p.includes('\0')) return false;
  return !p.split(/[\\/]+/).includes('..');
}

const CheckSchema = z.object({ text, check: text }).strict();

export const ExitCriterionSchema = z.object({ id: text, text, check: text }).strict();

export const PlanTaskSchema = z
  .object({
    id: positiveId,
    slug,
    title: text,
    depends_on: z.array(z.string().regex(TASK_REF_PATTERN)).default([]),
    scope: text,
    owns: z.array(text.refine(isSafeRelativePath)),
    interfaces: z.string().default(''),
    validation_method: text,
    validation: z.array(CheckSchema).min(1),
    evidence: text,
    agent: text.optional(),
    /** The task passes only if its branch changes files (acceptance fixes): a no-op is blocked. */
    requires_changes: z.boolean().optional(),
  })
  .strict();

export const PlanMilestoneSchema = z
  .object({
    id: positiveId,
    slug,
    title: text,
    depends_on: z.array(positiveId).default([]),
    goal: text,
    validation: z.array(CheckSchema).default([]),
    tasks: z.array(PlanTaskSchema).min(1),
  })
  .strict();

export const PlanSchema = z
  .object({
    name: z.string().regex(SAGA_NAME_PATTERN).optional(),
    problem: text,
    scope: z
      .object({
        in: z.array(z.string()).default([]),
        out: z.array(z.string()).default([]),
        delegated: z.array(z.string()).default([]),
      })
      .strict()
      .default({}),
    exit_criteria: z.array(ExitCriterionSchema).min(1),
    milestones: z.array(PlanMilestoneSchema).min(1),
    rationale: z.array(z.string()).optional(),
    tradeoffs: z
      .object({ short_term: z.string(), long_term: z.string(), balance: z.string() })
      .strict()
      .optional(),
  })
  .strict();

export type Plan = z.infer<typeof PlanSchema>;
export type PlanMilestone = Plan['milestones'][number];
export type PlanTask = PlanMilestone['tasks'][number];
export type ExitCriterion = z.infer<typeof ExitCriterionSchema>;
export type PlanResult = { ok: true; plan: Plan } | { ok: false; errors: string[] };

const SLUG_TEXT = 'a slug (a-z, 0-9 and "-", starting with a letter or digit)';

/**
 * What each field should hold, keyed by path suffix with indices as `*`; the longest matching suffix wins,
 * so `tasks.*.depends_on` beats a bare `depends_on`.
 */
const EXPECTATIONS: Record<string, string> = {
  '': 'a plan object (a YAML mapping or JSON object)',
  name: 'a saga name (1-63 characters of a-z, 0-9 and "-", starting with a letter or digit)',
  problem: 'a non-empty problem statement',
  scope: 'an object {in, out, delegated}',
  'scope.in': 'an array of strings',
  'scope.out': 'an array of strings',
  'scope.delegated': 'an array of strings',
  'scope.*.*': 'a string',
  exit_criteria: 'a non-empty array of {id, text, check}',
  'exit_criteria.*': 'an object {id, text, check}',
  'exit_criteria.*.id': 'a non-empty id like "E1"',
  text: 'a non-empty description',
  check: 'a non-empty command',
  milestones: 'a non-empty array of milestones',
  'milestones.*': 'a milestone object {id, slug, title, depends_on, goal, validation, tasks}',
  'milestones.*.id': 'a milestone id (an integer >= 1)',
  slug: SLUG_TEXT,
  title: 'a non-empty title',
  'milestones.*.depends_on': 'an array of milestone ids (integers)',
  'milestones.*.depends_on.*': 'a milestone id (an integer >= 1)',
  goal: 'a non-empty goal',
  validation: 'an array of {text, check}',
  'validation.*': 'an object {text, check}',
  'tasks.*.validation': 'a non-empty array of {text, check}',
  'milestones.*.tasks': 'a non-empty array of tasks',
  'tasks.*':
    'a task object {id, slug, title, depends_on, scope, owns, interfaces, validation_method, validation, evidence}',
  'tasks.*.id': 'a task id (an integer >= 1)',
  'tasks.*.depends_on': 'an array of task refs like "1.2"',
  'tasks.*.depends_on.*': 'a task ref string like "1.2" (quote it in YAML)',
  'tasks.*.scope': 'a non-empty description of the task scope',
  'tasks.*.owns': 'an array of paths',
  'tasks.*.owns.*': 'a relative path inside the repo (no leading "/", no "..")',
  'tasks.*.interfaces': 'a string',
  'tasks.*.validation_method': 'a non-empty validation method (e.g. "unit tests")',
  'tasks.*.evidence': 'a non-empty description of the evidence',
  'tasks.*.agent': 'an agent profile name',
  'tasks.*.requires_changes': 'true or false (true: a task that changes no files is blocked)',
  rationale: 'an array of strings',
  'rationale.*': 'a string',
  tradeoffs: 'an object {short_term, long_term, balance}',
  'tradeoffs.short_term': 'a string',
  'tradeoffs.long_term': 'a string',
  'tradeoffs.balance': 'a string',
};

type PathSegment = string | number;

export function formatPath(path: readonly PathSegment[]): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

function expectationFor(path: readonly PathSegment[]): string | undefined {
  const segments = path.map((s) => (typeof s === 'number' ? '*' : s));
  for (let start = 0; start <= segments.length; start++) {
    const key = segments.slice(start).join('.');
    if (start === segments.length && segments.length > 0) break; // '' only describes the top level
    if (key in EXPECTATIONS) return EXPECTATIONS[key];
  }
  return undefined;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let value: unknown = root;
  for (const seg of path) {
    if (value === null || typeof value !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(value, seg)) return undefined;
    value = (value as Record<PathSegment, unknown>)[seg];
  }
  return value;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  float: 'a non-integer number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
  undefined: 'nothing',
  bigint: 'a number',
  date: 'a date',
};

function showValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
    return value.trim() === '' ? `an empty string` : shown;
  }
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function issueMessage(issue: z.ZodIssue, raw: unknown, fileName: string): string {
  const where = issue.path.length ? `${fileName}: ${formatPath(issue.path)}` : fileName;
  const expected = expectationFor(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (check the spelling)`;
  }
  if (issue.code === 'invalid_type') {
    const want = expected ?? TYPE_NAMES[issue.expected] ?? issue.expected;
    if (issue.received === 'undefined') return `${where}: missing; expected ${want}`;
    return `${where}: expected ${want}, got ${TYPE_NAMES[issue.received] ?? issue.received}`;
  }
  if (issue.code === 'too_big' && issue.type === 'string') {
    const value = String(valueAt(raw, issue.path));
    return `${where}: expected at most ${String(issue.maximum)} characters, got ${value.length} (${showValue(value)})`;
  }
  if (!expected) return `${where}: ${issue.message}`;
  return `${where}: expected ${expected}, got ${showValue(valueAt(raw, issue.path))}`;
}

/** Validate an already-parsed plan object (e.g. planner JSON). Never throws. */
export function validatePlan(raw: unknown, fileName: string): PlanResult {
  try {
    const parsed = PlanSchema.safeParse(raw);
    if (!parsed.success) return failure(parsed.error.issues.map((i) => issueMessage(i, raw, fileName)));
    const problems = semanticProblems(parsed.data).map((p) => `${fileName}: ${p}`);
    return problems.length ? failure(problems) : { ok: true, plan: parsed.data };
  } catch (err) {
    return failure([`${fileName}: could not validate the plan (${(err as Error)?.message ?? String(err)})`]);
  }
}

function failure(errors: string[]): PlanResult {
  const unique = [...new Set(errors)];
  if (unique.length <= MAX_ERRORS) return { ok: false, errors: unique };
  return {
    ok: false,
    errors: [...unique.slice(0, MAX_ERRORS), `... and ${unique.length - MAX_ERRORS} more`],
  };
}

/** Parse YAML or JSON text (JSON for `.json` files or text starting with `{`), then validate. Never throws. */
export function parsePlanText(text: string, fileName: string): PlanResult {
  try {
    const asJson =
      /\.json$/i.test(fileName) || (!/\.ya?ml$/i.test(fileName) && text.trimStart().startsWith('{'));
    if (asJson) {
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        return failure([`${fileName}: not valid JSON: ${(err as Error).message}`]);
      }
      return validatePlan(raw, fileName);
    }
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    if (doc.errors.length) {
      return failure(doc.errors.map((e) => `${fileName}: not valid YAML: ${e.message.split('\n')[0]}`));
    }
    return validatePlan(doc.toJS({ maxAliasCount: 100 }), fileName);
  } catch (err) {
    return failure([`${fileName}: could not read the plan (${(err as Error)?.message ?? String(err)})`]);
  }
}

// ---- semantic checks -------------------------------------------------------------------------------

function semanticProblems(plan: Plan): string[] {
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

/**
 * The part of an owned path that decides overlaps: `./` and trailing `/` dropped, and a glob cut back to the
 * directory before its first wildcard (so `src/**` counts as all of `src`). Empty means the whole repo.
 */
function ownedRoot(p: string): string {
  const segments = p
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  const glob = segments.findIndex((s) => /[*?[\]{}]/.test(s));
  return (glob === -1 ? segments : segments.slice(0, glob)).join('/');
}

/**
 * Changed files that none of the task's `owns` entries covers (a glob counts as its folder, as for
 * overlaps). For a warning: a task may need to touch a shared file, but the user should hear of it.
 */
export function filesOutsideOwns(owns: readonly string[], changedFiles: readonly string[]): string[] {
  const roots = owns.map(ownedRoot);
  const covered = (file: string) =>
    roots.some((root) => root === '' || file === root || file.startsWith(`${root}/`));
  return changedFiles.filter((file) => !covered(file));
}

/** The status line for a task that changed files outside its `owns`, or null when it did not. */
export function ownsWarning(
  ref: string,
  owns: readonly string[],
  changedFiles: readonly string[],
): string | null {
  const outside = filesOutsideOwns(owns, changedFiles);
  if (outside.length === 0) return null;
  const shown = outside.slice(0, 5).join(', ');
  const more = outside.length > 5 ? ` and ${outside.length - 5} more` : '';
  return `Warning: task ${ref} changed files outside its owns: ${shown}${more}`;
}

function overlaps(a: string, b: string): boolean {
  return a === b || a === '' || b === '' || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

function ownershipOverlaps(m: PlanMilestone, i: number): string[] {
  const problems: string[] = [];
  const claimed: { task: number; j: number; k: number; path: string; root: string }[] = [];
  m.tasks.forEach((t, j) => {
    t.owns.forEach((path, k) => {
      const root = ownedRoot(path);
      const clash = claimed.find((c) => c.task !== t.id && overlaps(c.root, root));
      if (clash) {
        problems.push(
          `milestones[${i}].tasks[${j}].owns[${k}]: "${path}" overlaps "${clash.path}" owned by task ` +
            `${taskRef(m.id, clash.task)} (milestones[${i}].tasks[${clash.j}].owns[${clash.k}]); ` +
            `two tasks of one milestone must not own the same path`,
        );
      }
      claimed.push({ task: t.id, j, k, path, root });
    });
  });
  return problems;
}

// ---- helpers -----------------------------------------------------------------------------------------

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
