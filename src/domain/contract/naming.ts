/**
 * The one place for every name the saga gives things: saga slugs, workflow IDs, branches and archive refs,
 * task keys, milestone folders, Web UI links. Pure: imported by workflows and activities. The files of the
 * saga directory are named in saga-dir.ts.
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

/** `<feature-slug>-<YYYYMMDD-HHMM>` (UTC): docs/PROCEDURE.md §1.2. */
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

/** Every branch the saga makes starts with this; the saga never moves a branch outside it. */
export const SAGA_BRANCH_PREFIX = 'saga/';
/** Where work that leaves a branch is kept (a re-delegation's last attempt, a handoff's stray commits). */
export const ARCHIVE_REF_PREFIX = 'refs/saga-archive/';

export const isSagaBranch = (branch: string): boolean => branch.startsWith(SAGA_BRANCH_PREFIX);
/** `saga/<name>/`: the prefix of one saga's branches. */
export const sagaBranchPrefix = (name: string): string => `${SAGA_BRANCH_PREFIX}${name}/`;

export const taskBranch = (name: string, milestone: number, task: number, slug: string): string =>
  `${sagaBranchPrefix(name)}${taskKey(milestone, task)}-${slug}`;

export const integrationBranch = (name: string): string => `${sagaBranchPrefix(name)}integration`;
/**
 * What a milestone's pull request proposes (`delivery: pr`): the integration branch as it stood once that
 * milestone was integrated. Stacked PRs chain them: m1 on the base branch, m2 on m1, ...
 */
export const deliveryBranch = (name: string, milestone: number): string =>
  `${sagaBranchPrefix(name)}deliver-m${milestone}`;

/**
 * A delivery fix task (a CI failure or a review comment on a saga pull request): `m<M>fix<N>`, or `prfix<N>`
 * for the one PR of `pr: single`. The key names its workflow (`saga-<name>-<key>`), branch and worktree.
 */
export const fixTaskKey = (milestone: number | null, n: number): string =>
  milestone === null ? `prfix${n}` : `m${milestone}fix${n}`;
export const fixTaskBranch = (name: string, key: string): string => `${sagaBranchPrefix(name)}${key}`;
export const fixTaskWorkflowId = (name: string, key: string): string => `saga-${name}-${key}`;

/** What a branch of one saga may hold after `saga/<name>/`: git-safe characters only, bounded. */
const SAGA_BRANCH_PATTERN = /^saga\/([a-z0-9][a-z0-9-]{0,62})\/([A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*)$/;
const SAGA_BRANCH_MAX = 255;

/**
 * The saga a branch belongs to: `saga/<name>/...` → `<name>`, or undefined for any other branch (a `refs/heads/`
 * prefix is allowed, as webhooks send it). Strict, because forge webhooks hand it to us untrusted.
 */
export function sagaNameFromBranch(branch: string): string | undefined {
  const bare = branch.startsWith('refs/heads/') ? branch.slice('refs/heads/'.length) : branch;
  if (bare.length > SAGA_BRANCH_MAX || bare.includes('..')) return undefined;
  return SAGA_BRANCH_PATTERN.exec(bare)?.[1];
}

/** `refs/saga-archive/<path>`: e.g. `<name>/<task key>-d<N>` for a delegation's work. */
export const archiveRef = (path: string): string => `${ARCHIVE_REF_PREFIX}${path}`;

/** Worktree folder name; activities place it under the worktree root (default: beside the repo). */
export const worktreeDirName = (name: string, key: string): string => `saga-${name}-${key}`;
/** A saga's worktree for `key` (a task key, `planning`, `integration`, `validation`, `verify`): the one place its path is made. */
export const worktreePath = (saga: { worktreeRoot: string; name: string }, key: string): string =>
  `${saga.worktreeRoot}/${worktreeDirName(saga.name, key)}`;

export const milestoneDirName = (id: number, slug: string): string =>
  `${String(id).padStart(2, '0')}-${slug}`;
export const taskFileName = (id: number, slug: string): string => `${String(id).padStart(2, '0')}-${slug}.md`;

/** The Web UI port of a Temporal dev server (`saga server`, `saga dev`): its gRPC port + 1000. */
export const devServerUiPort = (grpcPort: number): number => grpcPort + 1000;

/** Links into the Temporal Web UI, always in the saga's own namespace. */
export const uiWorkflowUrl = (uiBaseUrl: string, namespace: string, workflowId: string): string =>
  `${uiBaseUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
/** The Web UI's list of one saga's workflows (by the SagaName search attribute). */
export const uiSagaListUrl = (uiBaseUrl: string, namespace: string, name: string): string =>
  `${uiBaseUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(`SagaName="${name}"`)}`;

/** Per-host task queue for git/agent/validation work: only the machine holding the repo serves it. */
export const hostTaskQueue = (hostId: string): string => `saga-host-${slugify(hostId, 60)}`;
/**
 * The host's queue for PROGRESS.md projectors: one per running saga, asleep between reads, so they have their
 * own worker and slots and never hold a slot an agent or a git step of some saga waits for.
 */
export const projectorTaskQueue = (hostQueue: string): string => `${hostQueue}-projector`;
export const WORKFLOW_TASK_QUEUE = 'saga';
