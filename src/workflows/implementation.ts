/**
 * Phase 2 (Saga procedure): the worker fleet. Milestones run in dependency order; within one, tasks start
 * as soon as their dependencies are done, up to the lane count, never two with overlapping `owns` at once.
 * Blocked tasks are re-delegated once, then escalated while the rest keeps running. Each milestone is
 * integrated (merged in dependency order, conflicts to a resolver agent) and validated.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  ParentClosePolicy,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { failureReason } from '../domain/saga/failure';
import {
  escalationQuestion,
  nextStepWhenBlocked,
  specGap,
  specGapDecision,
  specGapNote,
  specGapQuestion,
} from '../domain/fleet/blocked-report';
import {
  blockedTask,
  budgetStoppedTask,
  initialMilestones,
  noChangesBlock,
  passedTask,
  schedView,
  type TaskReport,
} from '../domain/fleet/fleet';
import { taskWorkflowId } from '../domain/saga/naming';
import {
  adjustmentPlan,
  currentTaskSpec,
  specChangeDecision,
  withSpecChange,
} from '../domain/fleet/spec-changes';
import { ownsWarning, type Plan, type PlanMilestone } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import { SagaName } from '../domain/saga/search-attributes';
import { milestoneOrder, readyTasks } from '../domain/fleet/schedule';
import { applyLiveProgress, type LiveProgress } from '../domain/saga/phase-progress';
import type {
  Answer,
  MilestoneState,
  ProgressEvent,
  SpecChange,
  TaskState,
  Usage,
} from '../domain/saga/state';
import { quickActivities } from './activity-proxies';
import { ask } from './ask';
import { FleetBudget } from './fleet-budget';
import { taskInputFor } from './fleet-launch';
import { integrateMilestone } from './integration';
import { implementationProgressQuery, taskUsageSignal } from './definitions';
import { taskWorkflow, type TaskInput } from './task';
import { addUsage, noUsage } from '../domain/agents/usage';

export interface ImplementationInput {
  ctx: SagaContext;
  plan: Plan;
  /** Milestones this round runs (a report round runs only its new milestone). */
  milestoneIds: number[];
  round: number;
  lanes: number;
  /** Carried over continue-as-new (`log`: this phase's lines so far, newest first). */
  carried?: { milestones: MilestoneState[]; usage: Usage; log?: string[] };
}

export interface ImplementationResult {
  outcome: 'integrated' | 'aborted';
  usage: Usage;
  /** The task and milestone states and log lines the saga takes over (absent from runs of older code). */
  progress?: LiveProgress;
}

type FleetEvent =
  | { type: 'done'; ref: string; report: TaskReport }
  | { type: 'failed'; ref: string; error: string }
  | { type: 'escalation'; ref: string; answer: Answer }
  | { type: 'spec-gap'; ref: string; gap: string; answer: Answer }
  | { type: 'budget'; answer: Answer };

/** A spec change from the user's answer (its text is the change). */
const specChangeOf = (source: SpecChange['source'], answer: Answer): SpecChange => ({
  source,
  by: answer.user,
  at: answer.answeredAt,
  text: answer.text ?? '',
});

/**
 * The blocked streak after the user answered for a task: one more blocked delegation goes back to them.
 * Before that, a task is re-delegated with its retained context, then with its spec adjusted.
 */
const ASKED_STREAK = 2;

/** Failed integrations of one milestone re-delegated without asking; after that the user decides. */
const INTEGRATION_REDOS = 2;
/** Past this many events a run continues as new between milestones (well before the server's warnings). */
const HISTORY_SOFT_LIMIT = 500;

export async function implementationWorkflow(input: ImplementationInput): Promise<ImplementationResult> {
  const { ctx, plan } = input;
  // Milestones already known (earlier rounds, or before continue-as-new) keep their state.
  // A task or integration that was in flight in a run that died is simply done again (idempotent steps).
  const known = (input.carried?.milestones ?? []).map((m) => ({
    ...m,
    status: m.status === 'integrating' ? ('running' as const) : m.status,
    tasks: m.tasks.map((t) => (t.status === 'running' ? { ...t, status: 'pending' as const } : t)),
  }));
  const milestones: MilestoneState[] = [
    ...known,
    ...initialMilestones(ctx.name, plan).filter((m) => !known.some((k) => k.id === m.id)),
  ];
  const states = new Map<string, TaskState>();
  for (const m of milestones) for (const t of m.tasks) states.set(t.id, t);
  let usage: Usage = input.carried?.usage ?? noUsage();
  const retained = new Map<string, { evidence: string[]; notes: string[] }>();
  /** Tasks to redo on top of the integrated state: their branch is moved there (old tip archived). */
  const rebaseOnto = new Map<string, string>();
  /** Blocked outcomes in a row: a re-delegation, one with the spec adjusted, then the user decides. */
  const blockedStreak = new Map<string, number>();
  /** Tasks whose next delegation adjusts the spec first, and those whose latest delegation did. */
  const adjustSpecOf = new Map<string, NonNullable<TaskInput['adjustSpec']>>();
  const adjustedLast = new Set<string>();
  const events: FleetEvent[] = [];
  const inFlight = new Set<Promise<unknown>>();
  // Task and milestone states live here, read by the `progress` query: a signal to the saga per change cost
  // its history four events each (the saga gets them with the result).
  // (A copy: the fleet changes its own task objects in place.)
  let live: LiveProgress = {
    milestones: JSON.parse(JSON.stringify(known)) as MilestoneState[],
    usage,
    log: input.carried?.log ?? [],
  };
  const post = (event: ProgressEvent) => {
    live = applyLiveProgress(live, event, new Date().toISOString());
  };
  setHandler(implementationProgressQuery, () => live);
  const budget = new FleetBudget({
    ctx,
    round: input.round,
    finishedUsd: () => usage.costUsd,
    log: (line) => logLine(line),
    answered: (answer) => events.push({ type: 'budget', answer }),
  });
  setHandler(taskUsageSignal, ({ ref, usage: spentByTask }) => {
    if (states.get(ref)?.status !== 'running') return; // a late report of a finished task
    budget.reportRunning(ref, spentByTask);
  });
  const logLine = (line: string) => post({ type: 'log', line });
  const update = (task: TaskState, patch: Partial<TaskState>) => {
    Object.assign(task, patch);
    post({ type: 'task', task: { ...task } });
  };
  const milestoneState = (id: number) => milestones.find((m) => m.id === id)!;
  const setMilestone = (m: MilestoneState, status: MilestoneState['status']) => {
    m.status = status;
    post({ type: 'milestone', id: m.id, status, integrationCommit: m.integrationCommit });
  };
  const finish = async (outcome: ImplementationResult['outcome']): Promise<ImplementationResult> => {
    await condition(allHandlersFinished);
    return { outcome, usage, progress: live };
  };

  const added = milestones.filter((m) => !known.some((k) => k.id === m.id));
  if (added.length)
    post({ type: 'milestones', milestones: JSON.parse(JSON.stringify(added)) as MilestoneState[] });
  const order = milestoneOrder(plan.milestones.map((m) => ({ id: m.id, dependsOn: m.depends_on })));

  for (const id of order) {
    if (!input.milestoneIds.includes(id)) continue;
    const spec = plan.milestones.find((m) => m.id === id)!;
    const mState = milestoneState(id);
    if (mState.status === 'integrated') continue;
    setMilestone(mState, 'running');

    for (let failedIntegrations = 0; ;) {
      const aborted = await runMilestoneTasks(spec);
      if (aborted) return finish('aborted');
      setMilestone(mState, 'integrating');
      setCurrentDetails(`Integrating milestone ${id}`);
      const result = await integrateMilestone(
        ctx,
        spec,
        mState,
        input.round,
        (spentByIntegration) => budget.resolverGate(spentByIntegration),
        logLine,
      );
      const beforeIntegration = budget.spent();
      usage = addUsage(usage, result.usage);
      budget.afterSpend(beforeIntegration);
      if (budget.stopped) return finish('aborted');
      if (result.ok) {
        mState.integrationCommit = result.head;
        // One event for the milestone: the view marks its passed tasks integrated itself.
        for (const t of mState.tasks) if (t.status === 'passed') t.status = 'integrated';
        setMilestone(mState, 'integrated');
        break;
      }
      // Re-delegate what integration sent back, with the failure output as retained context; after
      // INTEGRATION_REDOS failures in a row the user decides whether another round is worth it.
      failedIntegrations++;
      let userNote: string | null = null;
      if (failedIntegrations > INTEGRATION_REDOS) {
        const answer = await ask(ctx.sagaWorkflowId, {
          id: `esc-m${id}-integration-r${input.round}-${failedIntegrations}`,
          kind: 'escalation',
          prompt: `Milestone ${id} failed integration ${failedIntegrations} times: ${(result.redelegate[0]?.note ?? '').replace(/\.$/, '')}. Re-delegate ${result.redelegate.map((r) => r.ref).join(', ')} again (optionally with a note in --text) or abort?`,
          options: ['retry', 'abort'],
          recommended: 0,
        });
        if (answer.choice === 'abort') return finish('aborted');
        userNote = answer.text ?? null;
      }
      for (const redo of result.redelegate) {
        const task = states.get(redo.ref)!;
        retained.set(redo.ref, {
          evidence: redo.evidence,
          notes: [redo.note, ...(redo.details ?? []), ...(userNote ? [userNote] : [])],
        });
        if (redo.rebaseOnto) rebaseOnto.set(redo.ref, redo.rebaseOnto);
        update(task, { status: 'pending', reason: redo.note });
      }
      setMilestone(mState, 'running');
    }

    const info = workflowInfo();
    const moreToDo = order.some(
      (m) => input.milestoneIds.includes(m) && milestoneState(m).status !== 'integrated',
    );
    if ((info.continueAsNewSuggested || info.historyLength > HISTORY_SOFT_LIMIT) && moreToDo) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof implementationWorkflow>({
        ...input,
        carried: { milestones, usage, log: live.log },
      });
    }
  }
  return finish('integrated');

  /** Runs the milestone's pending tasks until all passed or skipped; returns true when the user aborted. */
  async function runMilestoneTasks(spec: PlanMilestone): Promise<boolean> {
    for (;;) {
      const view = schedView(spec, states);
      if (
        view
          .filter((t) => t.milestone === spec.id)
          .every((t) => t.status === 'done' || t.status === 'skipped')
      )
        return false;
      // A crossed saga budget starts no new agent run; running ones finish while the user is asked.
      if (budget.over()) budget.ask();
      // All ready tasks start in one workflow task, not one start round trip after another.
      else for (const ref of readyTasks(view, input.lanes)) launch(spec, states.get(ref)!);
      await nextEvent();
      const event = events.shift()!;
      if (event.type === 'budget') {
        // Applied when it came (an integration may be waiting for it too); a stop waits for the running
        // tasks to be stopped and hand off their work.
        if (!budget.stopped) continue;
        budget.tellRunningTasks(true);
        await CancellationScope.nonCancellable(() => Promise.allSettled([...inFlight]));
        return true;
      }
      const task = states.get(event.ref)!;
      if (event.type === 'escalation') {
        const choice = event.answer.choice;
        logLine(`Escalation of ${event.ref} answered by ${event.answer.user}: ${choice}`);
        if (choice === 'abort') return true;
        if (choice === 'skip') update(task, { status: 'skipped' });
        else {
          const note = event.answer.text ?? '';
          if (choice === 'edit') await changeSpec(task, 'edit', event.answer);
          retained.set(event.ref, {
            evidence: choice === 'edit' ? [] : task.evidence,
            notes: note && choice !== 'edit' ? [note] : [],
          });
          blockedStreak.set(event.ref, ASKED_STREAK);
          update(task, { status: 'pending' });
        }
        continue;
      }
      if (event.type === 'spec-gap') {
        if (await resolveSpecGap(task, event.gap, event.answer)) return true;
        continue;
      }
      const taskSpec = spec.tasks.find((t) => t.id === task.task);
      const noChanges =
        event.type === 'done' && taskSpec ? noChangesBlock(taskSpec, task.changedFiles, event.report) : null;
      // A fix that changed nothing is blocked like any other blocked outcome (re-delegated, then escalated).
      const rep =
        event.type !== 'done'
          ? null
          : noChanges
            ? { ...event.report, status: 'blocked' as const, reason: noChanges }
            : event.report;
      const beforeReport = budget.spent();
      const runningSpend = budget.settle(event.ref);
      // A failed child's reported runs are spent all the same.
      usage = addUsage(usage, rep ? rep.usage : runningSpend);
      budget.afterSpend(beforeReport);
      const taskUsage = addUsage(task.usage ?? noUsage(), rep?.usage);
      if (rep?.specChange)
        await keepSpecChange(
          task,
          rep.specChange,
          `blocked in ${task.delegations - 1} delegations in a row; the planner adjusted its spec.`,
        );
      if (rep?.budgetStopped) {
        update(task, budgetStoppedTask(task, rep, taskUsage));
        retained.set(event.ref, {
          evidence: rep.evidence,
          notes: [
            'The previous delegation was ended by the saga budget; its work is committed on your branch: continue from it.',
          ],
        });
        logLine(
          `Task ${event.ref} ended by the saga budget (${rep.reason ?? 'budget'}); redone after a raise`,
        );
        continue;
      }
      if (rep?.status === 'passed') {
        blockedStreak.delete(event.ref);
        const owns =
          plan.milestones.find((m) => m.id === task.milestone)?.tasks.find((t) => t.id === task.task)?.owns ??
          [];
        update(task, passedTask(task, rep, taskUsage, ownsWarning(event.ref, owns, rep.changedFiles)));
        continue;
      }
      const reason = rep?.reason ?? (event.type === 'failed' ? event.error : 'blocked');
      update(task, blockedTask(task, rep, reason, taskUsage));
      if (rep?.reviewStop === 'abort') {
        logLine(`Task ${event.ref}: its quality-locked review was aborted at its checkpoint; the saga stops`);
        return true;
      }
      // An agent that cannot run (not installed, not authenticated, denied) fails the same way again, and
      // one that reported itself blocked (a spec gap) needs the user's answer, not another run.
      const retryable = rep?.retryable !== false;
      const streak = (blockedStreak.get(event.ref) ?? 0) + 1;
      blockedStreak.set(event.ref, streak);
      const next = nextStepWhenBlocked({ streak, retryable, checksFailed: rep?.checksFailed === true });
      if (next !== 'ask') {
        // Re-delegate with the retained context (failures and the agent's transcript); the second time
        // with the spec adjusted by the planner first.
        retained.set(event.ref, {
          evidence: rep?.evidence ?? [],
          notes: [`Previous delegation was blocked: ${reason}`],
        });
        if (next === 'adjust' && taskSpec)
          adjustSpecOf.set(event.ref, {
            blocker: reason,
            plan: adjustmentPlan(plan, spec, currentTaskSpec(taskSpec, task.specChanges)),
            evidence: rep?.evidence ?? [],
          });
        logLine(
          `Task ${event.ref} blocked (${reason}); re-delegating with retained context${next === 'adjust' ? ' and its spec adjusted' : ''}`,
        );
        update(task, { status: 'pending' });
        continue;
      }
      const adjusted = adjustedLast.has(event.ref);
      if (adjusted)
        logLine(`Task ${event.ref} did not converge despite re-delegation and spec adjustment: ${reason}`);
      const evidence = task.evidence.join(', ') || 'none';
      const gap = rep?.agentBlocked ? specGap(rep.agentBlocked) : null;
      if (gap !== null) {
        // A spec gap is the user's to close: asked as a question, the answer goes to the next delegation.
        void ask(ctx.sagaWorkflowId, specGapQuestion(task, gap)).then(
          (answer) => events.push({ type: 'spec-gap', ref: event.ref, gap, answer }),
          () => undefined, // cancelled with the workflow; the main loop sees the cancellation itself
        );
        continue;
      }
      const blocker = {
        agentBlocked: rep?.agentBlocked,
        reviewEscalated: rep?.reviewStop === 'escalated',
        adjusted,
        retryable,
        reason,
        evidence,
      };
      void ask(ctx.sagaWorkflowId, escalationQuestion(task, blocker)).then(
        (answer) => events.push({ type: 'escalation', ref: event.ref, answer }),
        () => undefined, // cancelled with the workflow; the main loop sees the cancellation itself
      );
    }
  }

  /**
   * Acts on the answer to a spec gap question; returns true when the user aborted. The answer is a change
   * of the agreed spec, so it is logged as a deviation and written to decisions.md, never applied silently.
   */
  async function resolveSpecGap(task: TaskState, gap: string, answer: Answer): Promise<boolean> {
    if (answer.choice === 'abort') {
      logLine(`Spec gap of task ${task.id} answered by ${answer.user}: abort`);
      return true;
    }
    const entry = specGapDecision(task, gap, answer);
    logLine(entry.title);
    await recordDecision(entry);
    if (answer.choice === 'skip') update(task, { status: 'skipped' });
    else {
      const clarification = { ...answer, text: `${gap} — ${answer.text ?? ''}` };
      update(task, { specChanges: withSpecChange(task, specChangeOf('spec-gap', clarification)) });
      retained.set(task.id, {
        evidence: task.evidence,
        notes: [specGapNote(gap, answer.user, answer.text ?? '')],
      });
      blockedStreak.set(task.id, ASKED_STREAK);
      update(task, { status: 'pending', reason: null });
    }
    return false;
  }

  /**
   * The user's change to a task's spec: kept with the task (every later attempt gets it, its spec file
   * lists it), logged as a deviation and written to decisions.md.
   */
  async function changeSpec(task: TaskState, source: SpecChange['source'], answer: Answer): Promise<void> {
    await keepSpecChange(
      task,
      specChangeOf(source, answer),
      `${answer.user} answered ${answer.interactionId} with ${answer.choice}.`,
    );
  }

  async function keepSpecChange(task: TaskState, change: SpecChange, how: string): Promise<void> {
    update(task, { specChanges: withSpecChange(task, change) });
    const entry = specChangeDecision(task, change, how);
    logLine(entry.title);
    await recordDecision(entry);
  }

  async function recordDecision(entry: { at: string; title: string; lines: string[] }): Promise<void> {
    await quickActivities(ctx.hostQueue)
      .prependDecision({ sagaDir: ctx.sagaDir, entry })
      .catch(() => undefined); // the log line records it as well
  }

  /** Starts the task's child workflow (the fleet goes on scheduling while the server starts it). */
  function launch(spec: PlanMilestone, task: TaskState): void {
    const rebase = rebaseOnto.get(task.id);
    rebaseOnto.delete(task.id);
    const adjustSpec = adjustSpecOf.get(task.id);
    adjustSpecOf.delete(task.id);
    if (adjustSpec) adjustedLast.add(task.id);
    else adjustedLast.delete(task.id);
    const args = taskInputFor(
      ctx,
      spec,
      task,
      { milestones, states },
      {
        ...(rebase ? { rebaseOnto: rebase } : {}),
        retained: retained.get(task.id),
        ...(adjustSpec ? { adjustSpec } : {}),
        ...(budget.limited ? { budget: budget.grantFor(task.id) } : {}),
      },
    );
    const { delegation, worktree } = args;
    const workflowId = taskWorkflowId(ctx.name, task.milestone, task.task, delegation);
    // Running from now on, so the next scheduling pass never starts it twice; the saga hears at once (the
    // run id comes with the result).
    update(task, { status: 'running', delegations: delegation, workflowId, worktree, error: null });
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
        (rep) => events.push({ type: 'done', ref: task.id, report: rep }),
        // The task's own reason, not its wrappers' ("Child Workflow execution failed").
        (error: unknown) => events.push({ type: 'failed', ref: task.id, error: failureReason(error) }),
      );
    inFlight.add(outcome);
    void outcome.finally(() => {
      inFlight.delete(outcome);
      budget.untrack(task.id, workflowId);
    });
  }

  /**
   * Waits for the next fleet event. When the saga is cancelled, the running tasks are cancelled with it;
   * wait for them to finish their durable handoff (agent stopped, work committed, worktree removed).
   */
  async function nextEvent(): Promise<void> {
    try {
      await condition(() => events.length > 0);
    } catch (error) {
      if (isCancellation(error))
        await CancellationScope.nonCancellable(() => Promise.allSettled([...inFlight]));
      throw error;
    }
  }
}
