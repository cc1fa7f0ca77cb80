/**
 * The saga: one workflow per feature (`saga-<name>`), the single address for every user interaction.
 * It runs the phases (planning → implementation → validation as child workflows, then acceptance, which
 * only asks the user, itself; looping on reported issues) and keeps the status that `saga status` and the
 * Web UI show.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  executeChild,
  isCancellation,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { failureReason } from '../domain/saga/failure';
import { integrationBranch, phaseWorkflowId } from '../domain/saga/naming';
import { planOutline } from '../domain/plan';
import { summarizePlan } from '../domain/planning/planner';
import { mergeLogs, reduceProgress, unresolvedTasks, type ProgressView } from '../domain/saga/phase-progress';
import type { SagaInput } from '../domain/saga/saga-input';
import {
  migrateSagaState,
  SAGA_LOG_KEEP,
  SAGA_STATE_VERSION,
  SagaStateError,
  type SagaState,
} from '../domain/saga/saga-state';
import { SagaAwaitingInput, SagaName, SagaPhase } from '../domain/saga/search-attributes';
import type { Interaction, Phase, ProgressEvent, SagaStatus } from '../domain/saga/state';
import {
  parseReconciliationInput,
  reconciliationLogLines,
  type Reconciliation,
} from '../domain/record/reconciliation';
import { addUsage, noUsage } from '../domain/agents/usage';
import { acceptRound } from './acceptance';
import { quickActivities } from './activity-proxies';
import { ask, askAll, toInteraction } from './ask';
import {
  answersQuery,
  carryQuery,
  progressBatchSignal,
  progressSignal,
  reconcileUpdate,
  statusQuery,
} from './definitions';
import { implementationWorkflow } from './implementation';
import { InteractionEffects } from './interaction-effects';
import { InteractionHub } from './interaction-hub';
import { confirmNameRequest, intakeAndPlan, type PlannedSaga } from './saga-intake';
import { validationWorkflow } from './validation';

export interface SagaOutcome {
  phase: Extract<Phase, 'complete' | 'cancelled'>;
  rounds: number;
  integrationBranch: string;
  reportPath: string | null;
}

/** Wait before the PROGRESS.md projector is started again after it failed. */
const PROJECTOR_RESTART_MS = 10_000;

/**
 * `state`: where a new run of the saga starts (continue-as-new at a phase boundary, or `saga continue`); a
 * state of an older version is migrated first (README: Versioning).
 */
export async function sagaWorkflow(input: SagaInput, state?: SagaState): Promise<SagaOutcome> {
  const carry = state === undefined ? undefined : carriedState(state);
  const self = workflowInfo().workflowId;
  const quick = quickActivities(input.hostQueue);
  const specPath = `${input.sagaDir}/SAGA.md`;
  let phase: Phase = 'planning';
  /** The approved plan and its context; null until planning approves one. */
  let saga: PlannedSaga | null = carry
    ? {
        ctx: carry.ctx,
        plan: carry.plan,
        problem: carry.problem,
        environment: carry.environment,
        ...(carry.decisions ? { decisions: carry.decisions } : {}),
      }
    : null;
  let executionModeLabel = carry?.executionModeLabel ?? 'pending';
  let lanes = carry?.lanes ?? 1;
  let progress: ProgressView = {
    milestones: carry?.milestones ?? [],
    usage: carry?.usage ?? noUsage(),
    // Sent by the planning phase while it runs; a carried run only knows the approved plan.
    planSummary: carry
      ? summarizePlan(carry.plan, { version: carry.planVersion, state: 'approved', specPath })
      : null,
  };
  let round = carry?.round ?? 1;
  let reportPath: string | null = null;
  /** Why the saga failed (one line); set once, when it does. */
  let failure: string | null = null;
  const log: string[] = carry?.log ?? [];
  let sagaDirReady = carry !== undefined;
  /** What the latest `saga continue` found comparing this record with git and the evidence. */
  let reconciliation: Reconciliation | null = carry?.reconciliation ?? null;

  /** A line already stamped with its time (as an activity wrote it) becomes the newest. */
  const addStampedLog = (stamped: string) => {
    log.unshift(stamped);
    // PROGRESS.md keeps the whole log, merged from this window at every write.
    log.length = Math.min(log.length, SAGA_LOG_KEEP);
  };
  const addLog = (line: string) => addStampedLog(`${new Date().toISOString()} ${line}`);
  // Chat notifications, reminders and decisions.md entries around interactions (never blocking the hub).
  const effects = new InteractionEffects({
    saga: input.name,
    sagaDir: input.sagaDir,
    hostQueue: input.hostQueue,
    uiUrl: () => status().uiUrl,
    pending: () => hub.list(),
    noChatSince: carry?.noChatSince ?? null,
  });
  /**
   * Search attribute changes of one workflow task go out as one upsert (each upsert is a history event): a
   * phase change and the question it opens, an answer and the phase it ends.
   */
  const attributeChanges = new Map<string, SearchAttributeUpdatePair>();
  const upsert = (change: SearchAttributeUpdatePair) => {
    if (!attributeChanges.size)
      void Promise.resolve().then(() => {
        upsertSearchAttributes([...attributeChanges.values()]);
        attributeChanges.clear();
      });
    attributeChanges.set(change.key.name, change);
  };
  /** The SagaAwaitingInput search attribute as last set (a new run starts with the default, false). */
  let awaitingInput = false;
  const hub = new InteractionHub(carry?.hub, ({ opened, answered }) => {
    if (opened) addLog(`Waiting for input: ${opened.kind} ${opened.id}`);
    if (opened) effects.opened(opened);
    if (answered) effects.answered(answered);
    if (answered)
      addLog(
        `${answered.user} answered ${answered.interactionId}: ${answered.choice}${answered.text ? ` (${answered.text})` : ''}`,
      );
    // Only a change of the value is recorded (each upsert is a history event).
    const waiting = hub.list().length > 0;
    if (waiting !== awaitingInput) upsert({ key: SagaAwaitingInput, value: waiting });
    awaitingInput = waiting;
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
    milestones: progress.milestones,
    integrationBranch: integrationBranch(input.name),
    sagaDir: input.sagaDir,
    uiUrl: input.uiBaseUrl
      ? `${input.uiBaseUrl}/namespaces/${workflowInfo().namespace}/workflows/${self}`
      : '',
    round,
    hostQueue: input.hostQueue,
    usage: progress.usage,
    planSummary: progress.planSummary,
    log,
    error: failure,
    reconciliation,
  });
  setHandler(statusQuery, status);
  setHandler(
    reconcileUpdate,
    (found) => {
      reconciliation = { ...found, at: new Date().toISOString() };
      reconciliationLogLines(found).forEach(addLog);
      return reconciliation;
    },
    { validator: (found) => void parseReconciliationInput(found) },
  );
  // What a new run needs to resume without redoing finished work (`saga continue` on a failed/terminated run).
  /** The state a new run needs; null until the plan is approved. */
  const carryState = (): SagaState | null =>
    saga
      ? {
          version: SAGA_STATE_VERSION,
          ...saga,
          planVersion: progress.planSummary?.version ?? null,
          executionModeLabel,
          lanes,
          milestones: progress.milestones,
          round,
          hub: hub.snapshot(),
          log,
          usage: progress.usage,
          noChatSince: effects.carried(),
          reconciliation,
        }
      : null;
  setHandler(carryQuery, carryState);
  setHandler(answersQuery, () => hub.snapshot().answered);
  // Intake's question is open before the update handler exists, so an answer sent right after
  // `saga start` (even in the first workflow task) finds it.
  if (!carry) hub.open(toInteraction(confirmNameRequest(input)));
  hub.install();
  // Planning and validation report here; the implementation phase keeps its own (children of older code
  // still send it here).
  setHandler(progressSignal, (event: ProgressEvent) => applyProgress(event));
  setHandler(progressBatchSignal, (batch: ProgressEvent[]) => batch.forEach(applyProgress));

  function applyProgress(event: ProgressEvent): void {
    const next = reduceProgress(progress, event);
    progress = next.view;
    next.log.forEach(addLog);
  }

  /** Whether this run has set its phase (each upsert is a history event: a phase set again is skipped). */
  let phaseSet = false;
  const setPhase = (next: Phase) => {
    if (phaseSet && next === phase) return;
    phaseSet = true;
    phase = next;
    upsert({ key: SagaPhase, value: next });
    setCurrentDetails(`Phase: ${next}`);
    addLog(`Phase: ${next}`);
  };

  // PROGRESS.md is a projection of this state, read through the status query: while the run goes on, one
  // long-running activity writes it whenever the state changed (not an activity per change, so this
  // history stays small); at the end of the saga one last write records its final state.
  const writeProgress = () =>
    quick.writeProgressSnapshot({ sagaDir: input.sagaDir, workflowId: self, runId: workflowInfo().runId });
  const projector = new CancellationScope();
  const projectProgress = async () => {
    await condition(() => sagaDirReady);
    for (;;) {
      // A projector that ends (its time is up, or its worker died for good) is started again.
      await quick.projectProgress({ sagaDir: input.sagaDir, workflowId: self }).catch(async (error) => {
        if (isCancellation(error)) throw error;
        await sleep(PROJECTOR_RESTART_MS);
      });
    }
  };

  const open = (i: Interaction) => hub.open(i);
  const askHere = (request: Parameters<typeof ask>[1]) => ask(self, request, open);

  try {
    setPhase(carry ? 'implementation' : 'planning');
    void projector.run(projectProgress).catch(() => undefined);
    void CancellationScope.nonCancellable(() => effects.run()).catch(() => undefined);

    if (!saga) {
      const intake = await intakeAndPlan(input, {
        ask: askHere,
        log: addLog,
        modesResolved: (modes) => ({ lanes, executionModeLabel } = modes),
        sagaDirReady: () => {
          sagaDirReady = true;
        },
        progress: (events) => events.forEach(applyProgress),
      });
      // Planner runs count in the saga's total.
      progress = { ...progress, usage: addUsage(progress.usage, intake.usage) };
      if (!intake.planned) return await finish('cancelled');
      saga = intake.planned;
      await continueFromState();
    }
    return await rounds(saga);
  } catch (error) {
    if (isCancellation(error)) return await CancellationScope.nonCancellable(() => finish('cancelled'));
    // Continuing as new passes through here too: it is no failure.
    if (error instanceof ContinueAsNew) throw error;
    setPhase('failed');
    failure = failureReason(error);
    addLog(`Failed: ${failure}`);
    // The failure ends the run: PROGRESS.md shows why.
    projector.cancel();
    if (sagaDirReady) await writeProgress().catch(() => undefined); // the saga's own failure is the one to report
    // Chat (Slack, SAGA_NOTIFY_URL) hears why.
    await quick
      .notifyFailure({
        saga: input.name,
        runId: workflowInfo().runId,
        reason: failure,
        uiUrl: status().uiUrl,
      })
      .catch(() => undefined);
    throw error;
  }

  /**
   * Before the run ends or continues as new: chat notifications in flight, answers on their way to the
   * workflows that asked and updates being handled settle first, so the completion is not rejected and no
   * answer is lost.
   */
  async function settle(): Promise<void> {
    await effects.settled();
    await hub.delivered();
    await condition(allHandlersFinished);
  }

  async function finish(end: SagaOutcome['phase']): Promise<SagaOutcome> {
    setPhase(end);
    if (sagaDirReady) {
      // No saga worktree outlives the saga (branches stay); PROGRESS.md's last write in the same activity.
      projector.cancel();
      const { logLine } = await quick.finishSagaRun({
        repo: input.repo,
        sagaName: input.name,
        sagaDir: input.sagaDir,
        workflowId: self,
        runId: workflowInfo().runId,
      });
      if (logLine) addStampedLog(logLine);
    }
    await settle();
    return { phase: end, rounds: round, integrationBranch: integrationBranch(input.name), reportPath };
  }

  /** A declaration (hoisted): the workflow's main path returns above, before code placed here would run. */
  function approvedSummary(plan: PlannedSaga['plan']) {
    return summarizePlan(plan, {
      version: progress.planSummary?.version ?? null,
      state: 'approved',
      specPath,
    });
  }

  /** Implementation → validation → acceptance, looping on reported issues until the user accepts. */
  async function rounds(current: PlannedSaga): Promise<SagaOutcome> {
    const { ctx } = current;
    for (;;) {
      let { plan } = current;
      setPhase('implementation');
      const newest = plan.milestones[plan.milestones.length - 1]!.id;
      const impl = await executeChild(implementationWorkflow, {
        workflowId: phaseWorkflowId(input.name, 'implementation', round),
        staticSummary: `Implementation round ${round} of saga ${input.name}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
        args: [
          {
            ctx,
            plan,
            milestoneIds: round === 1 ? plan.milestones.map((m) => m.id) : [newest],
            round,
            lanes,
            // Round 1 starts from what planning spent (the fleet's budget counts it).
            ...(progress.milestones.length || progress.usage.costUsd > 0
              ? { carried: { milestones: progress.milestones, usage: progress.usage } }
              : {}),
          },
        ],
      });
      // The phase kept its task states and log lines itself (readers merged them while it ran): take them over.
      progress = {
        ...progress,
        usage: impl.usage,
        milestones: impl.progress?.milestones ?? progress.milestones,
      };
      if (impl.progress) log.splice(0, log.length, ...mergeLogs(log, impl.progress.log));
      if (impl.outcome === 'aborted') return finish('cancelled');

      setPhase('validation');
      const validation = await executeChild(validationWorkflow, {
        workflowId: phaseWorkflowId(input.name, 'validation', round),
        staticSummary: `Final validation, round ${round}`,
        typedSearchAttributes: [{ key: SagaName, value: input.name }],
        args: [{ ctx, plan: planOutline(plan), round }],
      });
      addLog(
        `Exit criteria: ${validation.criteria.filter((c) => c.result === 'passed').length}/${validation.criteria.length} passed`,
      );
      if (validation.exitCriteria) {
        // A check could not run and the user decided (seed 003): the spec carries the updated criteria.
        plan = { ...plan, exit_criteria: validation.exitCriteria };
        current = saga = { ...current, plan };
        progress = { ...progress, planSummary: approvedSummary(plan) };
      }
      // The report needs the whole saga's status, which the activity reads through the queries.
      ({ path: reportPath } = await quick.writeSagaReport({
        sagaDir: input.sagaDir,
        workflowId: self,
        runId: workflowInfo().runId,
        exitResults: validation.criteria.map((c) => ({ id: c.id, result: c.result, evidence: c.evidence })),
      }));

      setPhase('acceptance');
      // Acceptance only asks the user: the saga asks itself (no child, no signals either way).
      const acceptance = await acceptRound(
        {
          ctx,
          plan: planOutline(plan),
          round,
          validation,
          reportPath: reportPath!,
          unresolved: unresolvedTasks(progress.milestones),
          ...(current.decisions ? { decisions: current.decisions } : {}),
        },
        { ask: askHere, askAll: (requests) => askAll(self, requests, open) },
      );
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
        return finish('complete');
      }
      addLog(`${acceptance.by} reported ${acceptance.issues.length} issue(s); starting round ${round + 1}`);
      current = { ...current, plan: { ...plan, milestones: [...plan.milestones, acceptance.milestone] } };
      saga = current;
      progress = { ...progress, planSummary: approvedSummary(current.plan) };
      round++;
      await continueFromState();
    }
  }

  /**
   * A phase boundary: the saga goes on in a new run that starts from its state, once background work and
   * answers have settled. Each run's history stays small, and its start is the snapshot
   * `saga continue` resumes from when new code cannot replay a run (README: Versioning).
   */
  async function continueFromState(): Promise<never> {
    await settle();
    projector.cancel(); // the next run has its own
    return continueAsNew<typeof sagaWorkflow>(input, carryState()!);
  }
}

/** The carried state in the current version; a state that cannot be migrated fails the run, naming why. */
function carriedState(state: unknown): SagaState {
  try {
    return migrateSagaState(state);
  } catch (error) {
    if (error instanceof SagaStateError)
      throw ApplicationFailure.nonRetryable(error.message, 'InvalidSagaState');
    throw error;
  }
}
