/**
 * One milestone's tasks (docs/PROCEDURE.md §3.1-§3.14): ready tasks start as child workflows up to the
 * lane count; each ended delegation is judged (passed, stopped by the budget, or blocked: re-delegated,
 * re-delegated with its spec adjusted, or the user asked) while the others keep running.
 */
import {
  CancellationScope,
  condition,
  isCancellation,
  ParentClosePolicy,
  patched,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { nextStepWhenBlocked } from '../domain/fleet/blocked-report';
import {
  blockedTask,
  budgetStoppedTask,
  passedTask,
  schedView,
  type TaskReport,
} from '../domain/fleet/fleet';
import { BUDGET_STOPPED_NOTE, judgedReport } from '../domain/fleet/fleet-run';
import { readyTasks } from '../domain/fleet/schedule';
import { adjustmentHow, adjustmentPlan, currentTaskSpec } from '../domain/fleet/spec-changes';
import { ownsWarning, type PlanMilestone } from '../domain/plan';
import { failureReason } from '../domain/saga/failure';
import { taskWorkflowId } from '../domain/saga/naming';
import { SagaName } from '../domain/saga/search-attributes';
import type { TaskState } from '../domain/saga/state';
import { addUsage, noUsage } from '../domain/agents/usage';
import { askAboutBlocked, keepSpecChange, onEscalation, resolveSpecGap } from './fleet-answers';
import { taskInputFor } from './fleet-launch';
import { PATCHES } from './patches';
import type { Fleet, FleetEvent } from './fleet-state';
import { taskWorkflow } from './task';
import { askAboutUnrunnable, onUnrunnableAnswers } from './unrunnable-checks';

/** Runs the milestone's pending tasks until all passed or skipped; returns true when the saga stops. */
export async function runMilestoneTasks(fleet: Fleet, spec: PlanMilestone): Promise<boolean> {
  const { state, budget } = fleet;
  for (;;) {
    const view = schedView(spec, state.states, state.recorded);
    const own = view.filter((t) => t.milestone === spec.id);
    if (own.every((t) => t.status === 'done' || t.status === 'skipped')) return false;
    // A crossed saga budget starts no new agent run; running ones finish while the user is asked.
    if (budget.over()) budget.ask();
    // All ready tasks start in one workflow task, not one start round trip after another.
    else for (const ref of readyTasks(view, fleet.lanes)) launch(fleet, spec, state.task(ref));
    await nextEvent(fleet);
    const event = state.events.shift()!;
    if (event.type === 'budget') {
      // Applied when it came (an integration may be waiting for it too); a stop waits for the running
      // tasks to be stopped and hand off their work.
      if (!budget.stopped) continue;
      budget.tellRunningTasks(true);
      await CancellationScope.nonCancellable(() => Promise.allSettled([...state.inFlight]));
      return true;
    }
    const task = state.task(event.ref);
    if (event.type === 'escalation') {
      if (await onEscalation(fleet, task, event.answer)) return true;
    } else if (event.type === 'spec-gap') {
      if (await resolveSpecGap(fleet, task, event.gap, event.answer)) return true;
    } else if (event.type === 'unrunnable') {
      await onUnrunnableAnswers(fleet, spec, task, event);
    } else if (await onTaskEnded(fleet, spec, task, event)) return true;
  }
}

/** A task child ended (with its report, or failed); returns true when the saga stops. */
async function onTaskEnded(
  fleet: Fleet,
  spec: PlanMilestone,
  task: TaskState,
  event: Extract<FleetEvent, { type: 'done' | 'failed' }>,
): Promise<boolean> {
  const { state, budget } = fleet;
  const taskSpec = spec.tasks.find((t) => t.id === task.task);
  const rep = judgedReport(event.type === 'done' ? event.report : null, taskSpec, task.changedFiles);
  state.spend(budget, () => {
    const runningSpend = budget.settle(event.ref);
    // A failed child's reported runs are spent all the same.
    return rep ? rep.usage : runningSpend;
  });
  const taskUsage = addUsage(task.usage ?? noUsage(), rep?.usage);
  if (rep?.specChange)
    await keepSpecChange(fleet, task, rep.specChange, adjustmentHow(task.delegations - 1, rep.specChange));
  if (rep?.budgetStopped) {
    state.update(task, budgetStoppedTask(task, rep, taskUsage));
    state.retained.set(event.ref, { evidence: rep.evidence, notes: [BUDGET_STOPPED_NOTE] });
    state.log(`Task ${event.ref} ended by the saga budget (${rep.reason ?? 'budget'}); redone after a raise`);
    return false;
  }
  if (rep?.status === 'passed') {
    state.blockedStreak.delete(event.ref);
    const owns =
      fleet.plan.milestones.find((m) => m.id === task.milestone)?.tasks.find((t) => t.id === task.task)
        ?.owns ?? [];
    state.update(task, passedTask(task, rep, taskUsage, ownsWarning(event.ref, owns, rep.changedFiles)));
    return false;
  }
  const reason = rep?.reason ?? (event.type === 'failed' ? event.error : 'blocked');
  state.update(task, blockedTask(task, rep, reason, taskUsage));
  if (rep?.reviewStop === 'abort') {
    state.log(`Task ${event.ref}: its quality-locked review was aborted at its checkpoint; the saga stops`);
    return true;
  }
  onBlocked(fleet, spec, task, rep, reason);
  return false;
}

/**
 * A blocked delegation: re-delegated with the retained context (failures and the agent's transcript), the
 * second time with the spec adjusted by the planner first; otherwise the user is asked. An agent that
 * cannot run (not installed, not authenticated, denied) fails the same way again, and one that reported
 * itself blocked (a spec gap) needs the user's answer, not another run.
 */
function onBlocked(
  fleet: Fleet,
  spec: PlanMilestone,
  task: TaskState,
  rep: TaskReport | null,
  reason: string,
): void {
  const { state } = fleet;
  if (rep?.unrunnableChecks?.length) return askAboutUnrunnable(fleet, task, rep.unrunnableChecks);
  const retryable = rep?.retryable !== false;
  const streak = (state.blockedStreak.get(task.id) ?? 0) + 1;
  state.blockedStreak.set(task.id, streak);
  // A timed-out, hung or crashed agent takes the adjustment path too (older histories did not).
  const agentFailed = rep?.agentFailed === true && patched(PATCHES.agentFailureAdjusts);
  const next = nextStepWhenBlocked({
    streak,
    retryable,
    checksFailed: rep?.checksFailed === true,
    agentFailed,
  });
  if (next === 'ask') return askAboutBlocked(fleet, task, rep, reason, retryable);
  state.retained.set(task.id, {
    evidence: rep?.evidence ?? [],
    notes: [`Previous delegation was blocked: ${reason}`],
  });
  const taskSpec = spec.tasks.find((t) => t.id === task.task);
  if (next === 'adjust' && taskSpec)
    state.adjustSpecOf.set(task.id, {
      blocker: reason,
      plan: adjustmentPlan(fleet.plan, spec, currentTaskSpec(taskSpec, task.specChanges)),
      evidence: rep?.evidence ?? [],
    });
  state.log(
    `Task ${task.id} blocked (${reason}); re-delegating with retained context${next === 'adjust' ? ' and its spec adjusted' : ''}`,
  );
  state.update(task, { status: 'pending' });
}

/** Starts the task's child workflow (the fleet goes on scheduling while the server starts it). */
function launch(fleet: Fleet, spec: PlanMilestone, task: TaskState): void {
  const { ctx, state, budget } = fleet;
  const { rebase, adjustSpec } = state.takeDelegation(task.id);
  const args = taskInputFor(
    ctx,
    spec,
    task,
    { milestones: state.milestones, states: state.states },
    {
      ...(rebase ? { rebaseOnto: rebase } : {}),
      retained: state.retained.get(task.id),
      ...(adjustSpec ? { adjustSpec } : {}),
      ...(budget.limited ? { budget: budget.grantFor(task.id) } : {}),
    },
  );
  const { delegation, worktree } = args;
  const workflowId = taskWorkflowId(ctx.name, task.milestone, task.task, delegation);
  // Running from now on, so the next scheduling pass never starts it twice; the saga hears at once (the
  // run id comes with the result).
  state.update(task, { status: 'running', delegations: delegation, workflowId, worktree, error: null });
  const started = startChild(taskWorkflow, {
    workflowId,
    taskQueue: workflowInfo().taskQueue,
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    staticSummary: `Task ${task.id} ${task.title} (delegation ${delegation})`,
    // Listed with its saga when the Web UI filters by SagaName (children do not inherit attributes).
    typedSearchAttributes: [{ key: SagaName, value: ctx.name }],
    args: [args],
  });
  const outcome = started
    .then((handle) => {
      budget.track(task.id, handle);
      task.runId = handle.firstExecutionRunId;
      return handle.result();
    })
    .then(
      (rep) => state.events.push({ type: 'done', ref: task.id, report: rep }),
      // The task's own reason, not its wrappers' ("Child Workflow execution failed").
      (error: unknown) => state.events.push({ type: 'failed', ref: task.id, error: failureReason(error) }),
    );
  state.inFlight.add(outcome);
  void outcome.finally(() => {
    state.inFlight.delete(outcome);
    budget.untrack(task.id, workflowId);
  });
}

/**
 * Waits for the next fleet event. When the saga is cancelled, the running tasks are cancelled with it;
 * wait for them to finish their durable handoff (agent stopped, work committed, worktree removed).
 */
async function nextEvent(fleet: Fleet): Promise<void> {
  try {
    await condition(() => fleet.state.events.length > 0);
  } catch (error) {
    if (isCancellation(error))
      await CancellationScope.nonCancellable(() => Promise.allSettled([...fleet.state.inFlight]));
    throw error;
  }
}
