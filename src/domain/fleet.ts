/** Pure bookkeeping of the worker fleet: task state from the plan, and the scheduler's view of it. */
import type { Plan, PlanMilestone, PlanTask } from './plan';
import { integrationBranch, slugify, taskBranch, taskKey, taskRef } from './naming';
import type { SchedTask } from './schedule';
import type { MilestoneState, TaskState } from './state';

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
  };
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

export function schedView(milestone: PlanMilestone, states: Map<string, TaskState>): SchedTask[] {
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
      const done = state && ['integrated', 'passed', 'skipped'].includes(state.status);
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
 * Issues reported at acceptance become one task each in a new milestone, validated by the saga's exit
 * criteria (the only checks known to cover the whole feature).
 */
export function issuesMilestone(plan: Plan, issues: string[], round: number): PlanMilestone {
  const validation = plan.exit_criteria.map((c) => ({ text: c.text, check: c.check }));
  return {
    id: Math.max(...plan.milestones.map((m) => m.id)) + 1,
    slug: `fixes-round-${round}`,
    title: `Fixes reported at acceptance (round ${round})`,
    depends_on: plan.milestones.map((m) => m.id),
    goal: 'Resolve the issues the user reported at acceptance.',
    validation,
    tasks: issues.map((issue, i) => ({
      id: i + 1,
      slug: slugify(issue, 30),
      title: issue.length > 80 ? `${issue.slice(0, 77)}...` : issue,
      depends_on: [],
      scope: issue,
      owns: [],
      interfaces: '',
      validation_method: 'saga exit criteria',
      validation,
      evidence: 'Exit criteria output after the fix.',
    })),
  };
}
