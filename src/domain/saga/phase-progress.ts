/**
 * The saga's view of its phases, built from the progress events its children send: the milestones and
 * tasks, the live usage total and the plan summary. A pure reducer, so the workflow only keeps the result.
 */
import type {
  MilestoneState,
  PlanSummary,
  ProgressEvent,
  PullRequestStatus,
  TaskState,
  Usage,
} from '../contract/state';
import { addUsage, usageDelta } from '../agents/usage';
import { cappedLine } from '../text/caps';

/** Log lines kept in the saga's state and status (PROGRESS.md keeps the whole log on disk). */
export const SAGA_LOG_KEEP = 100;

export interface ProgressView {
  milestones: MilestoneState[];
  usage: Usage;
  planSummary: PlanSummary | null;
  /** The saga's pull requests (`delivery: pr`), in the order they were opened; absent before the first. */
  pullRequests?: PullRequestStatus[];
}

/** The view after `event`, and the log lines it adds (in order). The given view is not changed. */
export function reduceProgress(
  view: ProgressView,
  event: ProgressEvent,
): { view: ProgressView; log: string[] } {
  switch (event.type) {
    case 'log':
      return { view, log: [event.line] };
    case 'plan':
      return { view: { ...view, planSummary: event.summary }, log: [] };
    case 'pullRequest': {
      const pr = event.pullRequest;
      const known = view.pullRequests ?? [];
      const before = known.find((p) => p.number === pr.number);
      const pullRequests = before ? known.map((p) => (p === before ? pr : p)) : [...known, pr];
      return { view: { ...view, pullRequests }, log: pullRequestLines(before, pr) };
    }
    case 'milestones': {
      const known = new Set(view.milestones.map((m) => m.id));
      const added = event.milestones.filter((m) => !known.has(m.id));
      return { view: { ...view, milestones: [...view.milestones, ...added] }, log: [] };
    }
    case 'milestone': {
      const m = view.milestones.find((x) => x.id === event.id);
      if (!m) return { view, log: [] };
      // The implementation sends one event per integrated milestone, not one per task.
      const integrated = event.status === 'integrated';
      const next: MilestoneState = {
        ...m,
        status: event.status,
        integrationCommit: event.integrationCommit,
        tasks: integrated
          ? m.tasks.map((t) => (t.status === 'passed' ? { ...t, status: 'integrated' as const } : t))
          : m.tasks,
      };
      return {
        view: { ...view, milestones: view.milestones.map((x) => (x === m ? next : x)) },
        log: integrated ? [`Milestone ${m.id} ${m.title}: integrated`] : [],
      };
    }
    case 'task': {
      const m = view.milestones.find((x) => x.id === event.task.milestone);
      const before = m?.tasks.find((t) => t.id === event.task.id);
      if (!m || !before) return { view, log: [] };
      const next: MilestoneState = { ...m, tasks: m.tasks.map((t) => (t === before ? event.task : t)) };
      const log: string[] = [];
      if (before.status !== event.task.status) log.push(describeTaskChange(event.task));
      if (event.task.warning && event.task.warning !== before.warning) log.push(event.task.warning);
      return {
        view: {
          ...view,
          milestones: view.milestones.map((x) => (x === m ? next : x)),
          // Live usage for `saga status`: what the task's runs added since its last report (the
          // implementation result, which adds resolver runs, replaces the total when the round ends).
          usage: addUsage(view.usage, usageDelta(event.task.usage, before.usage)),
        },
        log,
      };
    }
  }
}

/** What a pull request's change says in the log: opened, CI turned, merged. */
function pullRequestLines(before: PullRequestStatus | undefined, pr: PullRequestStatus): string[] {
  const which = pr.milestone === null ? `PR #${pr.number}` : `Milestone ${pr.milestone}'s PR #${pr.number}`;
  if (!before) return [`${which} opened: ${pr.url} (${pr.head} → ${pr.base})`];
  const lines: string[] = [];
  if (before.ci !== pr.ci)
    lines.push(`${which}: CI ${pr.ci}${pr.failing.length ? ` (${pr.failing.join(', ')})` : ''}`);
  if (before.state !== pr.state) lines.push(`${which}: ${pr.state}`);
  if (before.draft && !pr.draft) lines.push(`${which}: marked ready for review`);
  return lines;
}

export function describeTaskChange(t: TaskState): string {
  switch (t.status) {
    case 'running':
      return `Task ${t.id} ${t.slug}: agent started (delegation ${t.delegations}) in ${t.worktree ?? 'its worktree'}`;
    case 'passed':
      return `Task ${t.id} ${t.slug}: passed after ${t.attempts} attempt(s), commit ${t.commit?.slice(0, 10) ?? '?'}`;
    case 'blocked':
      return `Task ${t.id} ${t.slug}: blocked — ${t.reason ?? 'no reason given'}`;
    default:
      return `Task ${t.id} ${t.slug}: ${t.status}`;
  }
}

/** Tasks that did not reach the integration branch, for the acceptance prompt. */
export function unresolvedTasks(milestones: MilestoneState[]): string[] {
  return milestones.flatMap((m) =>
    m.tasks
      .filter((t) => t.status === 'skipped' || t.status === 'blocked')
      .map((t) => `${t.id} ${t.slug} ${t.status}${t.reason ? ` (${t.reason})` : ''}`),
  );
}

/**
 * The running implementation phase's own view (its workflow keeps it and answers the `progress` query):
 * task and milestone states change there many times per task, so they stay out of the parent saga's history.
 * Readers merge it into the saga's status (mergeLiveProgress); the phase's result hands it to the saga.
 */
export interface LiveProgress {
  milestones: MilestoneState[];
  usage: Usage;
  /** Newest first, each line prefixed with its ISO time (as the saga's log). */
  log: string[];
  /** The saga budget as the fleet holds it now (a raise answered during the phase changes it); query only. */
  budgetUsd?: number | null;
}

/** `live` after `event` happened at `at` (ISO time); `live` is not changed. */
export function applyLiveProgress(live: LiveProgress, event: ProgressEvent, at: string): LiveProgress {
  const next = reduceProgress({ milestones: live.milestones, usage: live.usage, planSummary: null }, event);
  const added = next.log.map((line) => cappedLine(`${at} ${line}`)).reverse();
  return {
    milestones: next.view.milestones,
    usage: next.view.usage,
    log: added.length ? [...added, ...live.log].slice(0, SAGA_LOG_KEEP) : live.log,
  };
}

/** Two newest-first logs of ISO-prefixed lines as one, newest first, at most `keep` lines. */
export function mergeLogs(a: readonly string[], b: readonly string[], keep = SAGA_LOG_KEEP): string[] {
  const merged: string[] = [];
  let i = 0;
  let j = 0;
  while (merged.length < keep && (i < a.length || j < b.length)) {
    // ISO times compare as strings; on a tie the first log's line is the newer.
    if (j >= b.length || (i < a.length && a[i]!.slice(0, 24) >= b[j]!.slice(0, 24))) merged.push(a[i++]!);
    else merged.push(b[j++]!);
  }
  return merged;
}

/** What the saga's status says, with the running implementation phase's task states, usage and log. */
export function mergeLiveProgress<
  S extends { milestones: MilestoneState[]; usage?: Usage; log: string[]; budgetUsd?: number | null },
>(status: S, live: LiveProgress): S {
  return {
    ...status,
    milestones: live.milestones,
    usage: live.usage,
    log: mergeLogs(status.log, live.log),
    ...(live.budgetUsd !== undefined ? { budgetUsd: live.budgetUsd } : {}),
  };
}
