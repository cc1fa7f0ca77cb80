/**
 * One milestone's tasks (docs/PROCEDURE.md §3.1-§3.14): ready tasks start as child workflows up to the
 * lane count; each ended delegation is judged (passed, stopped by the budget, or blocked: re-delegated,
 * re-delegated with its spec adjusted, or the user asked) while the others keep running.
 */
import { CancellationScope, condition, isCancellation, patched } from '@temporalio/workflow';
import { nextStepWhenBlocked } from '../../domain/fleet/blocked-report';
import {
  blockedTask,
  budgetStoppedTask,
  passedTask,
  schedView,
  type TaskReport,
} from '../../domain/fleet/fleet';
import { BUDGET_STOPPED_NOTE } from '../../domain/fleet/budget';
import { judgedReport } from '../../domain/fleet/fleet-run';
import { readyTasks } from '../../domain/fleet/schedule';
import { adjustmentHow, adjustmentPlan, currentTaskSpec } from '../../domain/fleet/spec-changes';
import { ownsWarning, type PlanMilestone } from '../../domain/plan';
import type { TaskState } from '../../domain/contract/state';
import { addUsage, noUsage } from '../../domain/agents/usage';
import type { Fleet } from './fleet';
import type { FleetEvent } from './fleet-state';
import { PATCHES } from '../patches';

/** One milestone's tasks, run by the fleet (its `tasks` part). */
export class MilestoneTasks {
  constructor(private readonly fleet: Fleet) {}

  /** Runs the milestone's pending tasks until all passed or skipped; returns true when the saga stops. */
  async run(spec: PlanMilestone): Promise<boolean> {
    const { state, budget, launcher, answers, checks } = this.fleet;
    for (;;) {
      const view = schedView(spec, state.states, state.recorded);
      const own = view.filter((t) => t.milestone === spec.id);
      if (own.every((t) => t.status === 'done' || t.status === 'skipped')) return false;
      // A crossed saga budget starts no new agent run; running ones finish while the user is asked.
      if (budget.over()) budget.ask();
      // All ready tasks start in one workflow task, not one start round trip after another.
      else for (const ref of readyTasks(view, this.fleet.lanes)) launcher.launch(spec, state.task(ref));
      await this.nextEvent();
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
        if (await answers.onEscalation(task, event.answer)) return true;
      } else if (event.type === 'spec-gap') {
        if (await answers.resolveSpecGap(task, event.gap, event.answer)) return true;
      } else if (event.type === 'unrunnable') {
        await checks.onTaskAnswers(spec, task, event);
      } else if (await this.onTaskEnded(spec, task, event)) return true;
    }
  }

  /** A task child ended (with its report, or failed); returns true when the saga stops. */
  private async onTaskEnded(
    spec: PlanMilestone,
    task: TaskState,
    event: Extract<FleetEvent, { type: 'done' | 'failed' }>,
  ): Promise<boolean> {
    const { fleet } = this;
    const { state, budget } = fleet;
    const taskSpec = spec.tasks.find((t) => t.id === task.task);
    const rep = judgedReport(event.type === 'done' ? event.report : null, taskSpec, task.changedFiles);
    fleet.spend(() => {
      const runningSpend = budget.settle(event.ref);
      // A failed child's reported runs are spent all the same.
      return rep ? rep.usage : runningSpend;
    });
    const taskUsage = addUsage(task.usage ?? noUsage(), rep?.usage);
    if (rep?.specChange) {
      const how = adjustmentHow(task.delegations - 1, rep.specChange);
      await fleet.answers.keepSpecChange(task, rep.specChange, how);
    }
    if (rep?.budgetStopped) {
      state.update(task, budgetStoppedTask(task, rep, taskUsage));
      state.retained.set(event.ref, { evidence: rep.evidence, notes: [BUDGET_STOPPED_NOTE] });
      state.log(
        `Task ${event.ref} ended by the saga budget (${rep.reason ?? 'budget'}); redone after a raise`,
      );
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
    this.onBlocked(spec, task, rep, reason);
    return false;
  }

  /**
   * A blocked delegation: re-delegated with the retained context (failures and the agent's transcript), the
   * second time with the spec adjusted by the planner first; otherwise the user is asked. An agent that
   * cannot run (not installed, not authenticated, denied) fails the same way again, and one that reported
   * itself blocked (a spec gap) needs the user's answer, not another run.
   */
  private onBlocked(spec: PlanMilestone, task: TaskState, rep: TaskReport | null, reason: string): void {
    const { fleet } = this;
    const { state } = fleet;
    if (rep?.unrunnableChecks?.length) return fleet.checks.askAboutTask(task, rep.unrunnableChecks);
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
    if (next === 'ask') return fleet.answers.askAboutBlocked(task, rep, reason, retryable);
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

  /**
   * Waits for the next fleet event. When the saga is cancelled, the running tasks are cancelled with it;
   * wait for them to finish their durable handoff (agent stopped, work committed, worktree removed).
   */
  private async nextEvent(): Promise<void> {
    const { state } = this.fleet;
    try {
      await condition(() => state.events.length > 0);
    } catch (error) {
      if (isCancellation(error))
        await CancellationScope.nonCancellable(() => Promise.allSettled([...state.inFlight]));
      throw error;
    }
  }
}
