/**
 * The saga: one workflow per feature (`saga-<name>`), the single address for every user interaction.
 * It runs the phases as child workflows (planning → implementation → validation → acceptance, looping
 * on reported issues) and keeps the status that `saga status` and the Web UI show.
 */
import {
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  executeChild,
  isCancellation,
  patched,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { failureReason } from '../domain/failure';
import { confirmNamePrompt } from '../domain/intake';
import { announceModes, resolveExecutionMode, resolveParallel } from '../domain/flags';
import { integrationBranch, phaseWorkflowId } from '../domain/naming';
import type { Plan } from '../domain/plan';
import { summarizePlan } from '../domain/planner';
import type { SagaCarry, SagaContext, SagaInput } from '../domain/saga-input';
import { SagaAwaitingInput, SagaName, SagaPhase } from '../domain/search-attributes';
import type {
  Interaction,
  InteractionRequest,
  MilestoneState,
  Phase,
  PlanSummary,
  ProgressEvent,
  SagaStatus,
  TaskState,
  Usage,
} from '../domain/state';
import { acceptanceWorkflow } from './acceptance';
import { quickActivities } from './activities';
import { ask, toInteraction } from './ask';
import { carryQuery, progressBatchSignal, progressSignal, statusQuery } from './definitions';
import { implementationWorkflow } from './implementation';
import { InteractionEffects } from './interaction-effects';
import { InteractionHub } from './interaction-hub';
import { planningWorkflow } from './planning';
import { validationWorkflow } from './validation';
import { addUsage, noUsage, usageDelta } from '../domain/usage';

export interface SagaOutcome {
  phase: Extract<Phase, 'complete' | 'cancelled'>;
  rounds: number;
  integrationBranch: string;
  reportPath: string | null;
}

/**
 * Log lines kept in workflow state (and the status query); PROGRESS.md keeps the whole log on disk, merged
 * from this window at every write, so the window only has to outlast the changes between two writes.
 */
const LOG_KEEP = 100;

/** Marks sagas whose PROGRESS.md writes are spaced at least PROGRESS_MIN_INTERVAL_MS apart. */
export const PROGRESS_THROTTLE_PATCH = 'progress-write-throttle';
const PROGRESS_MIN_INTERVAL_MS = 1000;
/** Marks sagas that write PROGRESS.md once more when they fail, so the file shows why. */
export const FAILURE_PROGRESS_PATCH = 'failure-progress-write';
/** Marks sagas that tell chat (Slack, SAGA_NOTIFY_URL) why they failed. */
export const FAILURE_NOTIFY_PATCH = 'failure-notify';

export async function sagaWorkflow(input: SagaInput, carry?: SagaCarry): Promise<SagaOutcome> {
  const self = workflowInfo().workflowId;
  const quick = quickActivities(input.hostQueue);
  let phase: Phase = 'planning';
  let ctx: SagaContext | null = carry?.ctx ?? null;
  let executionModeLabel = carry?.executionModeLabel ?? 'pending';
  let lanes = carry?.lanes ?? 1;
  let plan: Plan | null = carry?.plan ?? input.plan;
  let problem = carry?.problem ?? input.goal;
  let environment = carry?.environment ?? null;
  let milestones: MilestoneState[] = carry?.milestones ?? [];
  let round = carry?.round ?? 1;
  let usage: Usage = carry?.usage ?? noUsage();
  let reportPath: string | null = null;
  /** Why the saga failed (one line); set once, when it does. */
  let failure: string | null = null;
  const specPath = `${input.sagaDir}/SAGA.md`;
  // Sent by the planning phase while it runs; a carried run only knows the approved plan.
  let planSummary: PlanSummary | null = carry
    ? summarizePlan(carry.plan, { version: null, state: 'approved', specPath })
    : null;
  const log: string[] = carry?.log ?? [];
  let dirty = false;
  let sagaDirReady = carry !== undefined;
  /** A `--plan` plan exists from the start, but only an approved plan may be carried into a new run. */
  let planApproved = carry !== undefined;

  const addLog = (line: string) => {
    log.unshift(`${new Date().toISOString()} ${line}`);
    log.length = Math.min(log.length, LOG_KEEP);
    dirty = true;
  };
  // Chat notifications, reminders and decisions.md entries around interactions (never blocking the hub).
  const effects = new InteractionEffects({
    saga: input.name,
    sagaDir: input.sagaDir,
    hostQueue: input.hostQueue,
    uiUrl: () => status().uiUrl,
    pending: () => hub.list(),
    sagaDirReady: () => sagaDirReady,
  });
  const hub = new InteractionHub(carry?.hub, ({ opened, answered }) => {
    if (opened) addLog(`Waiting for input: ${opened.kind} ${opened.id}`);
    if (opened) effects.opened(opened);
    if (answered) effects.answered(answered);
    if (answered)
      addLog(
        `${answered.user} answered ${answered.interactionId}: ${answered.choice}${answered.text ? ` (${answered.text})` : ''}`,
      );
    upsertSearchAttributes([{ key: SagaAwaitingInput, value: hub.list().length > 0 }]);
    dirty = true;
  });

  const status = (): SagaStatus => ({
    name: input.name,
    workflowId: self,
    runId: workflowInfo().runId,
    phase,
    goal: input.goal,
    repo: input.repo,
    configFile: input.configFile ?? null,
    flags: input.flags,
    executionMode: executionModeLabel,
    pending: hub.list(),
    milestones,
    integrationBranch: integrationBranch(input.name),
    sagaDir: input.sagaDir,
    uiUrl: input.uiBaseUrl
      ? `${input.uiBaseUrl}/namespaces/${workflowInfo().namespace}/workflows/${self}`
      : '',
    round,
    hostQueue: input.hostQueue,
    usage,
    planSummary,
    log,
    error: failure,
  });
  setHandler(statusQuery, status);
  // What a new run needs to resume without redoing finished work (`saga continue` on a failed/terminated run).
  /** The state a new run needs; null until the plan is approved. */
  const carryState = (): SagaCarry | null =>
    ctx && plan && planApproved
      ? {
          ctx,
          executionModeLabel,
          lanes,
          plan,
          problem,
          environment,
          milestones,
          round,
          hub: hub.snapshot(),
          log,
          usage,
        }
      : null;
  setHandler(carryQuery, carryState);
  // Intake's question is open before the update handler exists, so an answer sent right after
  // `saga start` (even in the first workflow task) finds it.
  // The prompt carries the intake restatement and unknowns (derived from the input alone: no I/O first).
  const confirmName = {
    id: 'confirm-name',
    kind: 'confirm-name',
    prompt: confirmNamePrompt(input),
    options: ['confirm', 'cancel'],
    recommended: 0,
  } as const satisfies InteractionRequest;
  if (!carry) hub.open(toInteraction({ ...confirmName, options: [...confirmName.options] }));
  hub.install();
  setHandler(progressSignal, (event: ProgressEvent) => {
    applyProgress(event);
    dirty = true;
  });
  setHandler(progressBatchSignal, (batch: ProgressEvent[]) => {
    batch.forEach(applyProgress);
    dirty = true;
  });

  function applyProgress(event: ProgressEvent): void {
    if (event.type === 'log') addLog(event.line);
    else if (event.type === 'milestones') {
      const known = new Set(milestones.map((m) => m.id));
      milestones = [...milestones, ...event.milestones.filter((m) => !known.has(m.id))];
    } else if (event.type === 'milestone') {
      const m = milestones.find((x) => x.id === event.id);
      if (!m) return;
      Object.assign(m, { status: event.status, integrationCommit: event.integrationCommit });
      // The implementation sends one event per integrated milestone, not one per task.
      if (event.status === 'integrated') {
        for (const t of m.tasks) if (t.status === 'passed') t.status = 'integrated';
        addLog(`Milestone ${m.id} ${m.title}: integrated`);
      }
    } else if (event.type === 'plan') {
      planSummary = event.summary;
    } else {
      const m = milestones.find((x) => x.id === event.task.milestone);
      const i = m?.tasks.findIndex((t) => t.id === event.task.id) ?? -1;
      if (!m || i < 0) return;
      const before = m.tasks[i]!;
      m.tasks[i] = event.task;
      // Live usage for `saga status`: what the task's runs added since its last report (the implementation
      // result, which adds resolver runs, replaces the total when the round ends).
      usage = addUsage(usage, usageDelta(event.task.usage, before.usage));
      if (before.status !== event.task.status) addLog(describeTaskChange(event.task));
      if (event.task.warning && event.task.warning !== before.warning) addLog(event.task.warning);
    }
  }

  const setPhase = (next: Phase) => {
    phase = next;
    upsertSearchAttributes([{ key: SagaPhase, value: next }]);
    setCurrentDetails(`Phase: ${next}`);
    addLog(`Phase: ${next}`);
  };

  // PROGRESS.md is a projection of this state; the activity reads it through the status query, so history
  // holds only the request. Changes are coalesced into one write at a time.
  const writeProgress = () =>
    quick.writeProgressSnapshot({ sagaDir: input.sagaDir, workflowId: self, runId: workflowInfo().runId });
  let writing = false;
  // A busy fleet changes state several times a second; a file for people needs at most one write a second
  // (each write is an activity in this history). Sagas started before the patch write at every change.
  const throttleProgress = patched(PROGRESS_THROTTLE_PATCH);
  let lastWrite = -Infinity;
  const progressWriter = async () => {
    for (;;) {
      await condition(() => dirty && sagaDirReady);
      writing = true;
      const wait = lastWrite + PROGRESS_MIN_INTERVAL_MS - Date.now();
      if (throttleProgress && wait > 0) await sleep(wait);
      dirty = false;
      lastWrite = Date.now();
      await writeProgress().finally(() => (writing = false));
    }
  };

  const unresolvedTasks = () => unresolvedTasksOf(milestones);
  const askHere = (request: Parameters<typeof ask>[1]) => ask(self, request, (i: Interaction) => hub.open(i));

  try {
    setPhase(carry ? 'implementation' : 'planning');
    void CancellationScope.nonCancellable(progressWriter).catch(() => undefined);
    void CancellationScope.nonCancellable(() => effects.run()).catch(() => undefined);

    if (!ctx) {
      // Intake: nothing is created on disk before the user confirms the name.
      const confirm = await askHere({ ...confirmName, options: [...confirmName.options] });
      if (confirm.choice === 'cancel') return await finish('cancelled');

      const settings = await quick.loadRunSettings({
        repo: input.repo,
        sagaHome: input.sagaHome,
        ...(input.configFile ? { configFile: input.configFile } : {}),
      });
      const agentName = input.agent ?? settings.defaultAgent;
      const mode = resolveExecutionMode(input.flags.subagents, {
        subagentDispatch: settings.subagentDispatch[agentName] ?? false,
        profileName: agentName,
      });
      const parallel = resolveParallel(input.flags, mode.mode);
      lanes = parallel.lanes;
      executionModeLabel = `${mode.manifestValue}; ${parallel.manifestValue}`;
      ctx = {
        name: input.name,
        sagaWorkflowId: self,
        repo: input.repo,
        base: input.base,
        goal: input.goal,
        sagaDir: input.sagaDir,
        worktreeRoot: input.worktreeRoot,
        hostQueue: input.hostQueue,
        flags: input.flags,
        executionMode: mode.mode,
        settings,
        agent: input.agent,
      };
      // Flags and modes are persisted before any artifact work.
      await quick.initSagaDir({
        sagaDir: input.sagaDir,
        name: input.name,
        flags: input.flags,
        executionMode: mode.manifestValue,
        parallelMode: parallel.manifestValue,
        degradations: [
          ...(mode.announcement
            ? [{ title: `Refused --subagents: ${mode.manifestValue}`, text: mode.announcement }]
            : []),
          ...(parallel.announcement
            ? [{ title: `Refused --parallel: ${parallel.manifestValue}`, text: parallel.announcement }]
            : []),
        ],
      });
      sagaDirReady = true;
      dirty = true;
      addLog(announceModes(input.flags, { product: 'Saga', workflow: 'saga' }).split('\n').join(' · '));
      for (const note of [mode.announcement, parallel.announcement]) if (note) addLog(note);
      if (mode.degraded) {
        // An exception checkpoint: degraded quality must be acknowledged, even in autonomous mode.
        const ack = await askHere({
          id: 'subagents-unavailable',
          kind: 'checkpoint',
          prompt: mode.announcement!,
          options: ['continue inline', 'abort'],
          recommended: 0,
        });
        if (ack.choice === 'abort') return await finish('cancelled');
      }

      const planning = await executeChild(planningWorkflow, {
        workflowId: phaseWorkflowId(input.name, 'planning'),
        staticSummary: `Planning of saga ${input.name}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
        args: [{ ctx, plan: input.plan }],
      });
      environment = planning.environment;
      problem = planning.problem;
      // Planner runs count in the saga's total, and a raise answered during planning holds for the rest.
      usage = addUsage(usage, planning.usage);
      if (planning.sagaBudgetUsd !== undefined)
        ctx = {
          ...ctx,
          settings: { ...ctx.settings, budget: { ...ctx.settings.budget, sagaUsd: planning.sagaBudgetUsd } },
        };
      if (!planning.approved || !planning.plan) return await finish('cancelled');
      plan = planning.plan;
      planApproved = true;
    }

    for (;;) {
      setPhase('implementation');
      const newest = plan!.milestones[plan!.milestones.length - 1]!.id;
      const impl = await executeChild(implementationWorkflow, {
        workflowId: phaseWorkflowId(input.name, 'implementation', round),
        staticSummary: `Implementation round ${round} of saga ${input.name}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
        args: [
          {
            ctx: ctx!,
            plan: plan!,
            milestoneIds: round === 1 ? plan!.milestones.map((m) => m.id) : [newest],
            round,
            lanes,
            // Round 1 starts from what planning spent (the fleet's budget counts it).
            ...(milestones.length || usage.costUsd > 0 ? { carried: { milestones, usage } } : {}),
          },
        ],
      });
      usage = impl.usage;
      if (impl.outcome === 'aborted') return await finish('cancelled');

      setPhase('validation');
      const validation = await executeChild(validationWorkflow, {
        workflowId: phaseWorkflowId(input.name, 'validation', round),
        staticSummary: `Final validation, round ${round}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
        args: [{ ctx: ctx!, plan: plan!, round }],
      });
      // The report needs the whole saga's status, which lives here.
      ({ path: reportPath } = await quick.writeReport({
        sagaDir: input.sagaDir,
        status: status(),
        plan: plan!,
        environment,
        exitResults: validation.criteria.map((c) => ({ id: c.id, result: c.result, evidence: c.evidence })),
      }));

      setPhase('acceptance');
      const acceptance = await executeChild(acceptanceWorkflow, {
        workflowId: phaseWorkflowId(input.name, 'acceptance', round),
        staticSummary: `Acceptance, round ${round}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
        args: [
          {
            ctx: ctx!,
            plan: plan!,
            round,
            validation,
            reportPath: reportPath!,
            unresolved: unresolvedTasks(),
          },
        ],
      });
      if (acceptance.accepted) {
        addLog(`Accepted by ${acceptance.by}`);
        if (acceptance.fastForward) {
          const ff = await quick.fastForwardBase({
            repo: input.repo,
            base: input.base,
            integrationBranch: integrationBranch(input.name),
          });
          addLog(
            ff.ok
              ? `Fast-forwarded ${input.base} to the integration branch`
              : `Did not fast-forward ${input.base}: ${ff.reason}`,
          );
        }
        return await finish('complete');
      }
      addLog(`${acceptance.by} reported ${acceptance.issues.length} issue(s); starting round ${round + 1}`);
      plan = { ...plan!, milestones: [...plan!.milestones, acceptance.milestone] };
      planSummary = summarizePlan(plan, {
        version: planSummary?.version ?? null,
        state: 'approved',
        specPath,
      });
      round++;
      if (workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof sagaWorkflow>(input, carryState()!);
      }
    }
  } catch (error) {
    if (isCancellation(error)) return await CancellationScope.nonCancellable(() => finish('cancelled'));
    setPhase('failed');
    // Continuing as new passes through here too (and always has set the phase): it is no failure.
    if (error instanceof ContinueAsNew) throw error;
    failure = failureReason(error);
    addLog(`Failed: ${failure}`);
    // The failure ends the run before the background writer would run again: write PROGRESS.md now.
    if (patched(FAILURE_PROGRESS_PATCH) && sagaDirReady) {
      await condition(() => !writing);
      await writeProgress().catch(() => undefined); // the saga's own failure is the one to report
    }
    if (patched(FAILURE_NOTIFY_PATCH)) {
      await quick
        .notifyFailure({
          saga: input.name,
          runId: workflowInfo().runId,
          reason: failure,
          uiUrl: status().uiUrl,
        })
        .catch(() => undefined);
    }
    throw error;
  }

  async function finish(end: SagaOutcome['phase']): Promise<SagaOutcome> {
    setPhase(end);
    if (sagaDirReady) {
      // No saga worktree outlives the saga (branches stay).
      const cleanup = await quick.cleanupSagaWorktrees({ repo: input.repo, sagaName: input.name });
      if (cleanup.kept.length)
        addLog(`Kept worktrees with uncommitted work: ${cleanup.kept.map((k) => k.path).join(', ')}`);
      await condition(() => !writing);
      await writeProgress();
    }
    // Background work (notifications, decisions.md) settles first, so the completion is not rejected.
    await effects.settled();
    return { phase: end, rounds: round, integrationBranch: integrationBranch(input.name), reportPath };
  }
}

/** Tasks that did not reach the integration branch, for the acceptance prompt. */
function unresolvedTasksOf(milestones: MilestoneState[]): string[] {
  return milestones.flatMap((m) =>
    m.tasks
      .filter((t) => t.status === 'skipped' || t.status === 'blocked')
      .map((t) => `${t.id} ${t.slug} ${t.status}${t.reason ? ` (${t.reason})` : ''}`),
  );
}

function describeTaskChange(t: TaskState): string {
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
