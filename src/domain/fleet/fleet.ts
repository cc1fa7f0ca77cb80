/** Pure bookkeeping of the worker fleet: task state from the plan, and the scheduler's view of it. */
import type { UnrunnableCheck } from './unrunnable-checks';
import { cappedList } from '../text/caps';
import type { AcceptanceIssue } from '../planning/acceptance-issues';
import type { Plan, PlanMilestone, PlanOutline, PlanTask } from '../plan';
import { integrationBranch, slugify, taskBranch, taskKey, taskRef } from '../contract/naming';
import type { SchedTask } from './schedule';
import type { GapOptions } from './spec-gap-options';
import type { MilestoneState, SpecChange, TaskState, Usage } from '../contract/state';

export function initialTaskState(sagaName: string, milestone: PlanMilestone, task: PlanTask): TaskState {
  return {
    id: taskRef(milestone.id, task.id),
    key: taskKey(milestone.id, task.id),
    milestone: milestone.id,
    task: task.id,
    slug: task.slug,
    title: task.title,
    status: 'pending',
    branch: taskBranch(sagaName, milestone.id, task.id, task.slug),
    commit: null,
    attempts: 0,
    delegations: 0,
    evidence: [],
    workflowId: null,
    runId: null,
    worktree: null,
    reason: null,
    changedFiles: [],
    ...(task.depends_on.length ? { dependsOn: task.depends_on } : {}),
  };
}

/**
 * A task's change with its run times: entering `running` stamps `startedAt` (and clears `endedAt`), leaving it
 * stamps `endedAt`; `now` is the workflow's time, so replay gives the same stamps.
 */
export function withRunTimes(task: TaskState, patch: Partial<TaskState>, now: string): Partial<TaskState> {
  if (!patch.status || patch.status === task.status) return patch;
  if (patch.status === 'running') return { ...patch, startedAt: now, endedAt: null };
  if (task.status === 'running') return { ...patch, endedAt: now };
  return patch;
}

export function initialMilestones(sagaName: string, plan: Plan): MilestoneState[] {
  return plan.milestones.map((m) => ({
    id: m.id,
    slug: m.slug,
    title: m.title,
    status: 'pending',
    tasks: m.tasks.map((t) => initialTaskState(sagaName, m, t)),
    integrationCommit: null,
  }));
}

const SCHED_STATUS: Record<TaskState['status'], SchedTask['status']> = {
  pending: 'pending',
  running: 'running',
  passed: 'done',
  integrated: 'done',
  skipped: 'skipped',
  blocked: 'blocked',
};

/**
 * `recorded`: milestones whose integrated tasks left the carried state (milestone-records.ts); a dependency
 * on one of those is done.
 */
export function schedView(
  milestone: PlanMilestone,
  states: Map<string, TaskState>,
  recorded: ReadonlySet<number> = new Set(),
): SchedTask[] {
  const own = milestone.tasks.map((t): SchedTask => {
    const ref = taskRef(milestone.id, t.id);
    return {
      ref,
      milestone: milestone.id,
      dependsOn: t.depends_on,
      owns: t.owns,
      status: SCHED_STATUS[states.get(ref)!.status],
    };
  });
  // Dependencies on other milestones appear as finished (their milestone is integrated) or blocked,
  // never as work to start here.
  const external = [...new Set(milestone.tasks.flatMap((t) => t.depends_on))]
    .filter((ref) => !own.some((o) => o.ref === ref))
    .map((ref): SchedTask => {
      const state = states.get(ref);
      const done = state
        ? ['integrated', 'passed', 'skipped'].includes(state.status)
        : recorded.has(Number(ref.split('.')[0]));
      return {
        ref,
        milestone: state?.milestone ?? Number(ref.split('.')[0]),
        dependsOn: [],
        owns: [],
        status: done ? 'done' : 'blocked',
      };
    });
  return [...external, ...own];
}

export { integrationBranch };

/**
 * Issues reported at acceptance become one task each in a new milestone. A task is validated by the check
 * given with its issue (when there is one: the only check that fails before the fix) and the saga's exit
 * criteria (so the fix breaks nothing); the milestone's validation runs every issue's check on the integrated
 * result. A fix must change files: one that changes none is blocked, never integrated (requires_changes).
 */
export function issuesMilestone(plan: PlanOutline, issues: AcceptanceIssue[], round: number): PlanMilestone {
  const exitCriteria = plan.exit_criteria.map((c) => ({ text: c.text, check: c.check }));
  const issueCheck = (issue: AcceptanceIssue) =>
    issue.check === null ? [] : [{ text: `Fixed: ${issue.text}`, check: issue.check }];
  return {
    id: Math.max(...plan.milestones.map((m) => m.id)) + 1,
    slug: `fixes-round-${round}`,
    title: `Fixes reported at acceptance (round ${round})`,
    depends_on: plan.milestones.map((m) => m.id),
    goal: 'Resolve the issues the user reported at acceptance.',
    validation: [...issues.flatMap(issueCheck), ...exitCriteria],
    tasks: issues.map((issue, i) => ({
      id: i + 1,
      slug: slugify(issue.text, 30),
      title: issue.text.length > 80 ? `${issue.text.slice(0, 77)}...` : issue.text,
      depends_on: [],
      scope: issue.text,
      owns: [],
      interfaces: '',
      validation_method:
        issue.check === null
          ? 'review only (no check was given for the issue): the saga exit criteria, then the user at acceptance'
          : "the issue's check, then the saga exit criteria",
      validation: [...issueCheck(issue), ...exitCriteria],
      evidence:
        issue.check === null
          ? 'The changed files and the exit criteria output, for the user to review at acceptance.'
          : "The issue's check and the exit criteria output after the fix.",
      requires_changes: true,
    })),
  };
}

/** The reason a delegation that changed no files is blocked (the task's branch has no changes of its own). */
export const NO_CHANGES_REASON =
  'made no changes: the task must change files to fix its issue, and its branch has no changes';

/**
 * Why a passing report of a task that must change files is blocked instead (null when it stands): neither
 * this delegation nor an earlier one of the same task changed a file, so there is nothing to integrate.
 */
export function noChangesBlock(
  task: Pick<PlanTask, 'requires_changes'>,
  changedBefore: readonly string[],
  report: { status: string; changedFiles: readonly string[] },
): string | null {
  if (!task.requires_changes || report.status !== 'passed') return null;
  return changedBefore.length || report.changedFiles.length ? null : NO_CHANGES_REASON;
}

/** Files a task's branch has changed over its delegations (each report names only its own delegation's). */
/** The files a task's delegations changed, merged, within the list cap (git keeps the full list). */
export const changedSoFar = (before: readonly string[], now: readonly string[] = []): string[] =>
  cappedList([...new Set([...before, ...now])]);

/** What a task child reports to the fleet when its delegation ends. */
export interface TaskReport {
  ref: string;
  status: Extract<TaskState['status'], 'passed' | 'blocked'>;
  reason: string | null;
  branch: string;
  commit: string;
  changedFiles: string[];
  evidence: string[];
  attempts: number;
  usage: Usage;
  workflowId: string;
  runId: string;
  /** False when the reason is one another delegation cannot fix (agent not installed, not authenticated...). */
  retryable?: boolean;
  /** The agent profile of the last run and the CLI's session id, when it printed one. */
  agent?: {
    profile: string;
    sessionId: string | null;
    /** Fix attempts (and crashed runs) that continued the agent's session instead of starting cold. */
    resumedRuns?: number;
    /** Why the latest asked-for resume ran as a fresh session instead (one line). */
    sessionNote?: string;
  };
  /**
   * The agent's own reason (one line) when the task ended on its blocked report: no other attempt was
   * made, and the fleet asks the user instead of re-delegating (`retryable` is false).
   */
  agentBlocked?: string;
  /** The answers its agent offered with that report (labelled), and the one it recommends. */
  gapOptions?: GapOptions;
  /** The saga budget ended the task (no run started, or its run was stopped): it is redone after a raise. */
  budgetStopped?: boolean;
  /**
   * The user's answer at the quality-locked review's cap-reached or stuck checkpoint: `abort` stops the
   * saga, `escalated` asks the user how to go on; neither is re-delegated on its own (`retryable` is false).
   */
  reviewStop?: 'abort' | 'escalated';
  /** The planner's adjustment of the task's spec made for this delegation (kept with the task's state). */
  specChange?: SpecChange;
  /** Blocked because its last attempt's checks failed (not a crash, a timeout or the agent's own report). */
  checksFailed?: boolean;
  /** Blocked because its last attempt's agent timed out, hung or crashed (retryable, no checks ran). */
  agentFailed?: boolean;
  /** Its checks that could not run (126/127): the task stopped after that attempt, the user decides. */
  unrunnableChecks?: UnrunnableCheck[];
}

const agentOf = (rep: TaskReport | null) => (rep?.agent ? { agent: rep.agent } : {});

/** A delegation ended by the saga budget: not a failure, the task is redone on its branch's work after a raise. */
export const budgetStoppedTask = (task: TaskState, rep: TaskReport, usage: Usage): Partial<TaskState> => ({
  status: 'pending',
  reason: rep.reason,
  commit: rep.commit,
  changedFiles: changedSoFar(task.changedFiles, rep.changedFiles),
  evidence: rep.evidence,
  attempts: task.attempts + rep.attempts,
  usage,
  ...agentOf(rep),
});

export const passedTask = (
  task: TaskState,
  rep: TaskReport,
  usage: Usage,
  warning: string | null,
): Partial<TaskState> => ({
  status: 'passed',
  warning,
  commit: rep.commit,
  evidence: rep.evidence,
  changedFiles: cappedList(rep.changedFiles),
  attempts: task.attempts + rep.attempts,
  reason: null,
  error: null,
  usage,
  ...agentOf(rep),
});

/** A blocked (or failed: no report) delegation; the branch keeps its work, a later delegation builds on it. */
export const blockedTask = (
  task: TaskState,
  rep: TaskReport | null,
  reason: string,
  usage: Usage,
): Partial<TaskState> => ({
  status: 'blocked',
  reason,
  error: reason,
  commit: rep?.commit ?? task.commit,
  changedFiles: changedSoFar(task.changedFiles, rep?.changedFiles),
  evidence: rep?.evidence ?? task.evidence,
  attempts: task.attempts + (rep?.attempts ?? 0),
  usage,
  ...agentOf(rep),
});
