/**
 * The one place for every name the saga gives things: saga slugs, workflow IDs,
 * branches, task keys, milestone folders. Pure: imported by workflows and activities.
 */

export const SAGA_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SLUG_MAX = 40;

/** Lowercase, dash-separated, safe for branch names, paths and workflow IDs. */
export function slugify(text: string, max = SLUG_MAX): string {
  const slug = text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/g, '');
  return slug || 'saga';
}

/** Throws a user-facing error naming the problem; returns the name when it is valid. */
export function assertSagaName(name: string): string {
  if (!SAGA_NAME_PATTERN.test(name)) {
    throw new Error(
      `Invalid saga name '${name}': use 1-63 characters of a-z, 0-9 and '-', starting with a letter or digit.`,
    );
  }
  return name;
}

/** `<feature-slug>-<YYYYMMDD-HHMM>` (UTC), as in the Saga procedure. */
export function proposeSagaName(goal: string, at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  const stamp =
    `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}` +
    `-${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}`;
  return `${slugify(goal, 40)}-${stamp}`;
}

export const sagaWorkflowId = (name: string): string => `saga-${name}`;
export const sagaNameFromWorkflowId = (workflowId: string): string | undefined =>
  /^saga-([a-z0-9][a-z0-9-]*)$/.exec(workflowId)?.[1];

/** `m<M>t<T>`: the short key of a task, used in IDs, branches and worktree names. */
export const taskKey = (milestone: number, task: number): string => `m${milestone}t${task}`;
/** `"1.2"`: the reference form used in plan files. */
export const taskRef = (milestone: number, task: number): string => `${milestone}.${task}`;

export function parseTaskRef(ref: string): { milestone: number; task: number } | undefined {
  const m = /^(\d+)\.(\d+)$/.exec(ref.trim()) ?? /^m(\d+)t(\d+)$/.exec(ref.trim());
  return m ? { milestone: Number(m[1]), task: Number(m[2]) } : undefined;
}

export const phaseWorkflowId = (name: string, phase: string, round = 1): string =>
  round > 1 ? `saga-${name}-${phase}-${round}` : `saga-${name}-${phase}`;

/** Task child workflow: `saga-<name>-m<M>t<T>`, with `-d<N>` for re-delegations. */
export const taskWorkflowId = (name: string, milestone: number, task: number, delegation = 1): string =>
  `saga-${name}-${taskKey(milestone, task)}${delegation > 1 ? `-d${delegation}` : ''}`;

export const taskBranch = (name: string, milestone: number, task: number, slug: string): string =>
  `saga/${name}/${taskKey(milestone, task)}-${slug}`;

export const integrationBranch = (name: string): string => `saga/${name}/integration`;

/** Worktree folder name; activities place it under the worktree root (default: beside the repo). */
export const worktreeDirName = (name: string, key: string): string => `saga-${name}-${key}`;

export const milestoneDirName = (id: number, slug: string): string =>
  `${String(id).padStart(2, '0')}-${slug}`;
export const taskFileName = (id: number, slug: string): string => `${String(id).padStart(2, '0')}-${slug}.md`;

/** Per-host task queue for git/agent/validation work: only the machine holding the repo serves it. */
export const hostTaskQueue = (hostId: string): string => `saga-host-${slugify(hostId, 60)}`;
export const WORKFLOW_TASK_QUEUE = 'saga';
