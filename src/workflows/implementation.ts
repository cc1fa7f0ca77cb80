/**
 * Phase 2 (Saga procedure): the worker fleet. Milestones run in dependency order; within one, tasks start
 * as soon as their dependencies are done, up to the lane count, never two with overlapping `owns` at once.
 * Blocked tasks are re-delegated once, then escalated while the rest keeps running. Each milestone is
 * integrated (merged in dependency order, conflicts to a resolver agent) and validated.
 */
import {
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  ParentClosePolicy,
  patched,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import {
  budgetInteraction,
  budgetWarningText,
  crossedWarning,
  raisedLimit,
  remainingUsd,
  type BudgetGrant,
} from '../domain/budget';
import { failureReason } from '../domain/failure';
import {
  describeAgentBlocker,
  SPEC_GAP_OPTIONS,
  specGap,
  specGapDeviation,
  specGapNote,
  specGapPrompt,
} from '../domain/blocked-report';
import { changedSoFar, initialMilestones, noChangesBlock, schedView } from '../domain/fleet';
import { integrationBranch, taskWorkflowId, worktreeDirName } from '../domain/naming';
import { ownsWarning, type Plan, type PlanMilestone } from '../domain/plan';
import type { SagaContext } from '../domain/saga-input';
import { SagaName } from '../domain/search-attributes';
import { milestoneOrder, readyTasks } from '../domain/schedule';
import type {
  Answer,
  InteractionRequest,
  MilestoneState,
  ProgressEvent,
  TaskState,
  Usage,
} from '../domain/state';
import { quickActivities } from './activities';
import { ask } from './ask';
import { integrateMilestone } from './integration';
import { budgetGrantSignal, taskUsageSignal } from './definitions';
import { report, reportBatch } from './shared';
import { taskWorkflow, type TaskReport } from './task';
import { addUsage, noUsage } from '../domain/usage';

export interface ImplementationInput {
  ctx: SagaContext;
  plan: Plan;
  /** Milestones this round runs (a report round runs only its new milestone). */
  milestoneIds: number[];
  round: number;
  lanes: number;
  /** Carried over continue-as-new. */
  carried?: { milestones: MilestoneState[]; usage: Usage };
}

export interface ImplementationResult {
  outcome: 'integrated' | 'aborted';
  milestones: MilestoneState[];
  usage: Usage;
}

type FleetEvent =
  | { type: 'done'; ref: string; report: TaskReport }
  | { type: 'failed'; ref: string; error: string }
  | { type: 'escalation'; ref: string; answer: Answer }
  | { type: 'spec-gap'; ref: string; gap: string; answer: Answer }
  | { type: 'budget'; answer: Answer };

/** Failed integrations of one milestone re-delegated without asking; after that the user decides. */
const INTEGRATION_REDOS = 2;
/** Past this many events a run continues as new between milestones (well before the server's warnings). */
const HISTORY_SOFT_LIMIT = 500;
/**
 * Marks runs that go on scheduling while task children start (waiting for each start to be acknowledged
 * cost a workflow-task round trip before the next finished task was even looked at), and that send all
 * the progress of one workflow task as one signal (each signal costs this workflow another task).
 */
export const LAUNCH_WITHOUT_WAITING_PATCH = 'fleet-launch-without-waiting';
/**
 * Marks runs that ask a spec gap as a question (its answer re-delegates the task and is recorded as a
 * deviation); asked only when a spec gap comes, so runs recorded before it replay their escalation.
 */
export const SPEC_GAP_QUESTION_PATCH = 'fleet-spec-gap-question';
/**
 * Marks runs whose saga budget holds for every agent run: tasks get the budget and report their spend after
 * each run, the fleet tells running tasks when it is crossed or raised (or stops them), the resolver is
 * gated, and a warning goes out at 80 %.
 */
export const BUDGET_HOLDS_PATCH = 'fleet-budget-holds';

export async function implementationWorkflow(input: ImplementationInput): Promise<ImplementationResult> {
  const { ctx, plan } = input;
  const launchWithoutWaiting = patched(LAUNCH_WITHOUT_WAITING_PATCH);
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
  let sagaBudget = ctx.settings.budget.sagaUsd;
  const retained = new Map<string, { evidence: string[]; notes: string[] }>();
  /** Tasks to redo on top of the integrated state: their branch is moved there (old tip archived). */
  const rebaseOnto = new Map<string, string>();
  let budgetAsked = false;
  /** Blocked outcomes in a row: one re-delegation, then the user decides. */
  const blockedStreak = new Map<string, number>();
  const events: FleetEvent[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const budgetHolds = patched(BUDGET_HOLDS_PATCH);
  const onExhausted = ctx.settings.budget.onExhausted ?? 'finish';
  /** What running task delegations have spent so far (their reports); the saga's truth is usage + these. */
  const runningSpend = new Map<string, Usage>();
  const children = new Map<string, ChildWorkflowHandle<typeof taskWorkflow>>();
  /** The user answered the budget question with stop. */
  let budgetStopped = false;
  let budgetQuestions = 0;
  if (budgetHolds)
    setHandler(taskUsageSignal, ({ ref, usage: spentByTask }) => {
      if (states.get(ref)?.status !== 'running') return; // a late report of a finished task
      const before = spent();
      runningSpend.set(ref, spentByTask);
      afterSpend(before);
    });

  // Progress goes out in order without holding up the fleet: awaiting each signal cost a workflow-task
  // round trip per state change. What piles up while one signal is in flight goes out as one batch,
  // which keeps the saga's history small.
  const outbox: ProgressEvent[] = [];
  let sending = false;
  const post = (event: ProgressEvent) => {
    outbox.push(event);
    if (sending) return;
    sending = true;
    void (async () => {
      // The rest of this activation runs first (it is synchronous), so its changes join the batch.
      if (launchWithoutWaiting) await Promise.resolve();
      while (outbox.length) {
        const batch = outbox.splice(0, outbox.length);
        await (batch.length === 1 ? report(ctx, batch[0]!) : reportBatch(ctx, batch));
      }
      sending = false;
    })();
  };
  /** Resolves when every progress event has been delivered. */
  const reporting = () => condition(() => !sending && outbox.length === 0);
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
  /** The result, once every progress signal has been delivered. */
  const finish = async (outcome: ImplementationResult['outcome']): Promise<ImplementationResult> => {
    await reporting();
    return { outcome, milestones, usage };
  };

  post({ type: 'milestones', milestones: JSON.parse(JSON.stringify(milestones)) as MilestoneState[] });
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
      await reporting(); // integration logs to the saga directly: keep the order
      const result = await integrateMilestone(
        ctx,
        spec,
        mState,
        input.round,
        budgetHolds ? resolverBudget : undefined,
      );
      const beforeIntegration = spent();
      usage = addUsage(usage, result.usage);
      if (budgetHolds) afterSpend(beforeIntegration);
      if (budgetStopped) return finish('aborted');
      if (result.ok) {
        mState.integrationCommit = result.head;
        // One signal for the milestone: the saga marks its passed tasks integrated itself (history stays small).
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
      await reporting();
      await continueAsNew<typeof implementationWorkflow>({ ...input, carried: { milestones, usage } });
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
      if (overBudget()) askBudget();
      // All ready tasks start in one workflow task, not one start round trip after another.
      else {
        const starts = readyTasks(view, input.lanes).map((ref) => launch(spec, states.get(ref)!));
        if (!launchWithoutWaiting) await Promise.all(starts);
      }
      await nextEvent();
      const event = events.shift()!;
      if (event.type === 'budget' && budgetHolds) {
        // Applied when it came (an integration may be waiting for it too); a stop waits for the running
        // tasks to be stopped and hand off their work.
        if (!budgetStopped) continue;
        stopRunningTasks();
        await CancellationScope.nonCancellable(() => Promise.allSettled([...inFlight]));
        return true;
      }
      if (event.type === 'budget') {
        budgetAsked = false;
        logLine(`Budget question answered by ${event.answer.user}: ${event.answer.choice}`);
        if (event.answer.choice === 'stop') return true;
        const raised = Number(event.answer.text);
        sagaBudget = Number.isFinite(raised) && raised > usage.costUsd ? raised : usage.costUsd + 1;
        continue;
      }
      const task = states.get(event.ref)!;
      if (event.type === 'escalation') {
        const choice = event.answer.choice;
        logLine(`Escalation of ${event.ref} answered by ${event.answer.user}: ${choice}`);
        if (choice === 'abort') return true;
        if (choice === 'skip') update(task, { status: 'skipped' });
        else {
          const note = event.answer.text ?? '';
          if (choice === 'edit')
            retained.set(event.ref, {
              evidence: [],
              notes: [`The task's spec was changed by the user: ${note}`],
            });
          else retained.set(event.ref, { evidence: task.evidence, notes: note ? [note] : [] });
          blockedStreak.set(event.ref, 1);
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
      const beforeReport = spent();
      if (rep) usage = addUsage(usage, rep.usage);
      // A failed child's reported runs are spent all the same.
      else if (budgetHolds) usage = addUsage(usage, runningSpend.get(event.ref));
      runningSpend.delete(event.ref);
      if (budgetHolds) afterSpend(beforeReport);
      const taskUsage = addUsage(task.usage ?? noUsage(), rep?.usage);
      if (rep?.budgetStopped) {
        // Not a failure: the task is redone (on its branch's work) once the budget is raised.
        update(task, {
          status: 'pending',
          reason: rep.reason,
          commit: rep.commit,
          changedFiles: changedSoFar(task.changedFiles, rep.changedFiles),
          evidence: rep.evidence,
          attempts: task.attempts + rep.attempts,
          worktree: null,
          usage: taskUsage,
          ...(rep.agent ? { agent: rep.agent } : {}),
        });
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
        update(task, {
          status: 'passed',
          warning: ownsWarning(event.ref, owns, rep.changedFiles),
          commit: rep.commit,
          evidence: rep.evidence,
          changedFiles: rep.changedFiles,
          attempts: task.attempts + rep.attempts,
          worktree: null,
          reason: null,
          error: null,
          usage: taskUsage,
          ...(rep.agent ? { agent: rep.agent } : {}),
        });
        continue;
      }
      const reason = rep?.reason ?? (event.type === 'failed' ? event.error : 'blocked');
      update(task, {
        status: 'blocked',
        reason,
        error: reason,
        commit: rep?.commit ?? task.commit,
        // The branch keeps a blocked delegation's work: a later delegation builds on it.
        changedFiles: changedSoFar(task.changedFiles, rep?.changedFiles),
        evidence: rep?.evidence ?? task.evidence,
        attempts: task.attempts + (rep?.attempts ?? 0),
        worktree: null,
        usage: taskUsage,
        ...(rep?.agent ? { agent: rep.agent } : {}),
      });
      // An agent that cannot run (not installed, not authenticated, denied) fails the same way again, and
      // one that reported itself blocked (a spec gap) needs the user's answer, not another run.
      const retryable = rep?.retryable !== false;
      const streak = (blockedStreak.get(event.ref) ?? 0) + 1;
      blockedStreak.set(event.ref, streak);
      if (streak < 2 && retryable) {
        // Re-delegate once with the retained context (failures and the agent's transcript).
        retained.set(event.ref, {
          evidence: rep?.evidence ?? [],
          notes: [`Previous delegation was blocked: ${reason}`],
        });
        logLine(`Task ${event.ref} blocked (${reason}); re-delegating with retained context`);
        update(task, { status: 'pending' });
        continue;
      }
      const evidence = task.evidence.join(', ') || 'none';
      const gap = rep?.agentBlocked ? specGap(rep.agentBlocked) : null;
      if (gap !== null && patched(SPEC_GAP_QUESTION_PATCH)) {
        // A spec gap is the user's to close: asked as a question, the answer goes to the next delegation.
        void ask(ctx.sagaWorkflowId, {
          id: `gap-${task.key}-d${task.delegations}`,
          kind: 'question',
          prompt: specGapPrompt(event.ref, task.title, gap),
          options: [...SPEC_GAP_OPTIONS],
          recommended: 0,
          textRequiredFor: ['answer'],
        }).then(
          (answer) => events.push({ type: 'spec-gap', ref: event.ref, gap, answer }),
          () => undefined, // cancelled with the workflow; the main loop sees the cancellation itself
        );
        continue;
      }
      void ask(ctx.sagaWorkflowId, {
        id: `esc-${task.key}-d${task.delegations}`,
        kind: 'escalation',
        prompt: rep?.agentBlocked
          ? `Task ${event.ref} (${task.title}) is blocked: ${describeAgentBlocker(rep.agentBlocked)}. Answer edit with the spec change in --text, retry with a note in --text, skip or abort. Evidence: ${evidence}`
          : retryable
            ? `Task ${event.ref} (${task.title}) is still blocked after re-delegation: ${reason}. Evidence: ${evidence}`
            : `Task ${event.ref} (${task.title}) cannot run its agent: ${reason}. Fix that, then retry (or skip/edit/abort). Transcript: ${evidence}`,
        options: ['retry', 'skip', 'edit', 'abort'],
        recommended: 0,
        textRequiredFor: ['edit'],
      }).then(
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
    const deviation = specGapDeviation(task.id, gap, answer);
    logLine(deviation);
    await quickActivities(ctx.hostQueue)
      .prependDecision({
        sagaDir: ctx.sagaDir,
        entry: {
          at: answer.answeredAt,
          title: deviation,
          lines: [
            `- Task ${task.id} (${task.title}) reported a spec gap; ${answer.user} answered ${answer.interactionId}.`,
            `- ${answer.choice === 'answer' ? 'The task is re-delegated with the clarification in its notes.' : 'The task is skipped.'}`,
          ],
        },
      })
      .catch(() => undefined); // the log line above records it as well
    if (answer.choice === 'skip') update(task, { status: 'skipped' });
    else {
      retained.set(task.id, {
        evidence: task.evidence,
        notes: [specGapNote(gap, answer.user, answer.text ?? '')],
      });
      blockedStreak.set(task.id, 1);
      update(task, { status: 'pending', reason: null });
    }
    return false;
  }

  /** Starts the task's child workflow; the returned promise settles when the server has started it. */
  function launch(spec: PlanMilestone, task: TaskState): Promise<unknown> {
    const taskSpec = spec.tasks.find((t) => t.id === task.task)!;
    const delegation = task.delegations + 1;
    // Start from the integrated state (or the base branch), plus the branches of same-milestone dependencies.
    const base = milestones.some((m) => m.status === 'integrated') ? integrationBranch(ctx.name) : ctx.base;
    const rebase = rebaseOnto.get(task.id);
    rebaseOnto.delete(task.id);
    const mergeBranches = taskSpec.depends_on
      .map((ref) => states.get(ref))
      .filter((dep): dep is TaskState => !!dep && dep.milestone === task.milestone)
      .map((dep) => dep.branch);
    const worktree = `${ctx.worktreeRoot}/${worktreeDirName(ctx.name, task.key)}`;
    const workflowId = taskWorkflowId(ctx.name, task.milestone, task.task, delegation);
    // Running from now on, so the next scheduling pass never starts it twice. Runs before the patch told
    // the saga once the start was acknowledged; now it hears at once (the run id comes with the result).
    const running = {
      status: 'running' as const,
      delegations: delegation,
      workflowId,
      worktree,
      error: null,
    };
    if (launchWithoutWaiting) update(task, running);
    else Object.assign(task, running);
    const started = startChild(taskWorkflow, {
      workflowId,
      taskQueue: workflowInfo().taskQueue,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `Task ${task.id} ${task.title} (delegation ${delegation})`,
      // Listed with its saga when the Web UI filters by SagaName (children do not inherit attributes).
      typedSearchAttributes: [{ key: SagaName, value: ctx.name }],
      args: [
        {
          ctx,
          milestone: spec.id,
          spec: taskSpec,
          ref: task.id,
          key: task.key,
          branch: task.branch,
          worktree,
          base,
          mergeBranches,
          delegation,
          ...(rebase
            ? {
                resetBranch: {
                  commit: rebase,
                  archiveRef: `refs/saga-archive/${ctx.name}/${task.key}-d${delegation}`,
                },
              }
            : {}),
          attemptOffset: task.attempts,
          attemptAsOneActivity: true,
          retained: retained.get(task.id) ?? { evidence: [], notes: [] },
          portBase: 20_000 + (task.milestone * 50 + task.task) * ctx.settings.worktree.portRangeSize,
          ...(budgetHolds && sagaBudget !== null ? { budget: grantFor(task.id, false) } : {}),
        },
      ],
    });
    const outcome = started
      .then((handle) => {
        if (budgetHolds) children.set(task.id, handle);
        if (launchWithoutWaiting) task.runId = handle.firstExecutionRunId;
        else update(task, { runId: handle.firstExecutionRunId });
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
      if (children.get(task.id)?.workflowId === workflowId) children.delete(task.id);
    });
    return started;
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

  /** What the saga has spent: finished work plus what running tasks reported (runs before the patch: finished only). */
  function spent(): number {
    if (!budgetHolds) return usage.costUsd;
    let total = usage.costUsd;
    for (const u of runningSpend.values()) total += u.costUsd;
    return total;
  }

  function overBudget(): boolean {
    return sagaBudget !== null && spent() >= sagaBudget;
  }

  /** The budget as task `ref` sees it: what everything else has spent. */
  function grantFor(ref: string, stopNow: boolean): BudgetGrant {
    return {
      limitUsd: sagaBudget,
      spentElsewhereUsd: spent() - (runningSpend.get(ref)?.costUsd ?? 0),
      onExhausted,
      ...(stopNow ? { stopNow } : {}),
    };
  }

  /** Tells every running task the current budget (so none starts another run past it), or stops them. */
  function tellRunningTasks(stopNow: boolean): void {
    for (const [ref, handle] of children)
      void handle.signal(budgetGrantSignal, grantFor(ref, stopNow)).catch(() => undefined);
  }
  function stopRunningTasks(): void {
    tellRunningTasks(true);
  }

  /** After the spend grew: the 80 % warning once, and at the budget the question (and the stop). */
  function afterSpend(before: number): void {
    const now = spent();
    if (crossedWarning(sagaBudget, before, now)) {
      const text = budgetWarningText(ctx.name, now, sagaBudget!);
      logLine(text);
      void quickActivities(ctx.hostQueue)
        .notifyNotice({
          saga: ctx.name,
          id: `budget-warning-r${input.round}-${Math.round(sagaBudget! * 100)}`,
          kind: 'budget-warning',
          prompt: text,
        })
        .catch(() => undefined); // the log line records it as well
    }
    if (sagaBudget === null || now === before) return;
    // Running tasks hear of every spend, so each gates its next run on what the whole saga has spent.
    const crossed = overBudget() && before < sagaBudget;
    tellRunningTasks(crossed && onExhausted === 'stop');
    if (crossed) askBudget();
  }

  /** The resolver's gate: waits while the budget is spent; 'stop' when the user stopped the saga. */
  async function resolverBudget(spentByIntegration: number): Promise<number | null | 'stop'> {
    if (sagaBudget === null) return null;
    const over = () => sagaBudget !== null && spent() + spentByIntegration >= sagaBudget;
    if (over()) {
      askBudget();
      await condition(() => !over() || budgetStopped);
    }
    if (budgetStopped) return 'stop';
    return remainingUsd(sagaBudget, spent() + spentByIntegration);
  }

  /** A raise or a stop, applied when it comes. */
  function applyBudgetAnswer(answer: Answer): void {
    budgetAsked = false;
    logLine(
      `Budget question answered by ${answer.user}: ${answer.choice}${answer.text ? ` ${answer.text}` : ''}`,
    );
    if (answer.choice === 'stop') {
      budgetStopped = true;
      return;
    }
    try {
      sagaBudget = raisedLimit(answer.text ?? '', sagaBudget!);
    } catch {
      return; // refused by the respond validator; an answer from before it changes nothing
    }
    logLine(`Saga budget is now $${sagaBudget}`);
    tellRunningTasks(false);
    if (overBudget()) askBudget();
  }

  /** Asks once per crossing whether to raise the saga budget or stop; the answer arrives as an event. */
  function askBudget(): void {
    if (budgetAsked) return;
    budgetAsked = true;
    const now = spent();
    // Each question its own id: a raise that is still not enough asks again.
    const id = `budget-r${input.round}-${Math.round(now * 100)}-of-${Math.round(sagaBudget! * 100)}`;
    const question: InteractionRequest = budgetHolds
      ? budgetInteraction(`${id}-q${++budgetQuestions}`, now, sagaBudget!, onExhausted)
      : {
          id,
          kind: 'budget',
          prompt: `The saga has spent $${usage.costUsd.toFixed(2)}, over its budget of $${sagaBudget}. No new agent run starts until you raise the budget (new amount in --text) or stop.`,
          options: ['raise', 'stop'],
          recommended: null,
          textRequiredFor: ['raise'],
        };
    void ask(ctx.sagaWorkflowId, question).then(
      (answer) => {
        if (budgetHolds) applyBudgetAnswer(answer);
        events.push({ type: 'budget', answer });
      },
      () => undefined,
    );
  }
}
