/**
 * The saga: one workflow per feature (`saga-<name>`), the single address for every user interaction. It
 * runs docs/PROCEDURE.md: intake and planning (a child), then rounds of implementation and validation
 * (children) and acceptance (which only asks the user, so the saga asks itself), a round again for each set
 * of reported issues. Its state, and the status `saga status` and the Web UI show, live in a SagaRun.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  executeChild,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { planOutline } from '../../domain/plan';
import { parseReconciliationInput } from '../../domain/contract/reconciliation';
import { failureReason } from '../../domain/saga/failure';
import {
  answersQuery,
  carryQuery,
  forgeEventSignal,
  interactionOpenedSignal,
  progressBatchSignal,
  progressSignal,
  reconcileUpdate,
  respondUpdate,
  statusQuery,
} from '../../domain/saga/messages';
import { integrationBranch, phaseWorkflowId } from '../../domain/contract/naming';
import {
  exitCriteriaLine,
  fastForwardLine,
  implementationCarry,
  issuesReportedLine,
  roundMilestoneIds,
  withIssuesMilestone,
} from '../../domain/saga/rounds';
import type { SagaInput } from '../../domain/saga/saga-input';
import { migrateSagaState, SagaStateError, type SagaState } from '../../domain/saga/saga-state';
import { SagaName } from '../../domain/contract/search-attributes';
import type { Phase } from '../../domain/contract/state';
import { endUpdate, planApprovedUpdate, reviewUpdate } from '../../domain/tracker/workpad-updates';
import { type AcceptanceResult } from './acceptance';
import { toInteraction } from '../ask';
import { accept, confirmByHand, exitResultsOf, writeReport } from './saga-report';
import { implementationWorkflow } from '../fleet/implementation';
import { acceptDelivered, delivering, wakeDeliveryWatch } from './delivered-acceptance';
import { confirmNameRequest, intakeAndPlan, type PlannedSaga } from './saga-intake';
import { confirmedBefore } from './issue-link';
import { SagaRun } from './saga-run';
import { validationWorkflow, type ValidationResult } from './validation';

export interface SagaOutcome {
  phase: Extract<Phase, 'complete' | 'cancelled'>;
  rounds: number;
  integrationBranch: string;
  reportPath: string | null;
}

/**
 * `state`: where a new run of the saga starts (continue-as-new at a phase boundary, or `saga continue`); a
 * state of an older version is migrated first (README: Versioning).
 */
export async function sagaWorkflow(input: SagaInput, state?: SagaState): Promise<SagaOutcome> {
  const run = new SagaRun(input, state === undefined ? undefined : carriedState(state));
  // The saga's API: its queries, updates and signals (names in domain/saga/messages.ts), all registered
  // before the first await so none misses a message sent in the first workflow task.
  setHandler(statusQuery, () => run.status());
  setHandler(reconcileUpdate, (found) => run.reconcile(found), {
    validator: (found) => void parseReconciliationInput(found),
  });
  setHandler(carryQuery, () => run.carryState());
  setHandler(answersQuery, () => run.hub.snapshot().answered);
  // Intake's question is open before the respond handler exists, so an answer sent right after
  // `saga start` (even in the first workflow task) finds it.
  if (!run.carried) run.hub.open(toInteraction(confirmNameRequest(input)));
  // Confirmed before the saga started (`saga watch`: the label): answered here, recorded like any answer.
  if (!run.carried && input.confirmedBy) confirmedBefore(run.hub, input.confirmedBy);
  // Children open their questions here; users answer them here (the hub sends each answer on, and hands
  // the saga's own answers over in-process: the saga needs no interactionAnswered handler).
  setHandler(interactionOpenedSignal, (...interactions) => interactions.forEach((i) => run.hub.open(i)));
  setHandler(respondUpdate, (response) => run.hub.respond(response), {
    validator: (response) => void run.hub.check(response),
  });
  // Planning and validation report here; the implementation phase keeps its own (children of older code
  // still send it here).
  setHandler(progressSignal, (event) => run.applyProgress(event));
  setHandler(progressBatchSignal, (batch) => batch.forEach((event) => run.applyProgress(event)));
  // A signed forge webhook (`saga chat serve`) is addressed to the saga; its delivery watch looks at once.
  setHandler(forgeEventSignal, (event) => wakeDeliveryWatch(run, event));
  try {
    run.setPhase(run.carried ? 'implementation' : 'planning');
    run.projector.start();
    void CancellationScope.nonCancellable(() => run.effects.run()).catch(() => undefined);
    // A new saga is planned first, then goes on in a new run; a carried run has its approved plan.
    if (!run.saga) return await intakeAndPlanning(run);
    return await runRound(run, run.saga);
  } catch (error) {
    if (isCancellation(error)) return await CancellationScope.nonCancellable(() => finish(run, 'cancelled'));
    // Continuing as new passes through here too: it is no failure.
    if (error instanceof ContinueAsNew) throw error;
    await fail(run, error);
    throw error;
  }
}

/** Intake and planning; an approved plan continues in a new run, which starts the rounds. */
async function intakeAndPlanning(run: SagaRun): Promise<SagaOutcome> {
  const intake = await intakeAndPlan(run.input, {
    ask: (request) => run.ask(request),
    log: (line) => run.addLog(line),
    modesResolved: (modes) => run.modesResolved(modes),
    sagaDirReady: () => {
      run.sagaDirReady = true;
    },
    progress: (events) => events.forEach((event) => run.applyProgress(event)),
    settingsLoaded: (settings) => run.issue.start(settings.intake, run.status().uiUrl),
  });
  // Planner runs count in the saga's total.
  run.addUsage(intake.usage);
  if (!intake.planned) return finish(run, 'cancelled');
  run.saga = intake.planned;
  run.issue.send(planApprovedUpdate(intake.planned.plan, intake.planned.problem));
  return continueFromState(run);
}

/**
 * One round: implementation → validation → acceptance. The user accepts (the saga completes) or reports
 * issues, which become the next round's milestone, run in a new run.
 */
async function runRound(run: SagaRun, planned: PlannedSaga): Promise<SagaOutcome> {
  if ((await implement(run, planned)) === 'aborted') return finish(run, 'cancelled');
  const validation = await validate(run, planned);
  const reported = await writeReport(run, validation);
  run.issue.send(reviewUpdate(planned.plan, run.exitResults ?? [], run.progress.usage.costUsd));
  const acceptance = delivering(run)
    ? await acceptDelivered(run, validation, reported)
    : await accept(run, validation, reported);
  if (acceptance.accepted) return complete(run, acceptance);
  return nextRound(run, acceptance);
}

async function implement(run: SagaRun, { ctx, plan }: PlannedSaga): Promise<'integrated' | 'aborted'> {
  const { input, round } = run;
  run.setPhase('implementation');
  const impl = await executeChild(implementationWorkflow, {
    workflowId: phaseWorkflowId(input.name, 'implementation', round),
    staticSummary: `Implementation round ${round} of saga ${input.name}`,
    typedSearchAttributes: [{ key: SagaName, value: input.name }],
    args: [
      {
        ctx,
        plan,
        milestoneIds: roundMilestoneIds(plan, round),
        round,
        lanes: run.lanes,
        ...implementationCarry(run.progress),
        ...(run.progress.pullRequests?.length ? { pullRequests: run.progress.pullRequests } : {}),
      },
    ],
  });
  run.takeOverProgress(impl.usage, impl.progress);
  return impl.outcome;
}

/** The exit criteria on the integration branch; criteria the user updated (a check could not run) are kept. */
async function validate(run: SagaRun, planned: PlannedSaga): Promise<ValidationResult> {
  const { input, round } = run;
  run.setPhase('validation');
  const validation = await executeChild(validationWorkflow, {
    workflowId: phaseWorkflowId(input.name, 'validation', round),
    staticSummary: `Final validation, round ${round}`,
    typedSearchAttributes: [{ key: SagaName, value: input.name }],
    args: [{ ctx: planned.ctx, plan: planOutline(planned.plan), round }],
  });
  run.addLog(exitCriteriaLine(validation.criteria));
  run.exitResults = exitResultsOf(validation);
  if (validation.exitCriteria)
    run.setPlan({ ...planned, plan: { ...planned.plan, exit_criteria: validation.exitCriteria } });
  return validation;
}

async function complete(
  run: SagaRun,
  acceptance: Extract<AcceptanceResult, { accepted: true }>,
): Promise<SagaOutcome> {
  const { input } = run;
  run.addLog(`Accepted by ${acceptance.by}`);
  await confirmByHand(run, acceptance.by);
  if (acceptance.fastForward) {
    const ff = await run.quick.fastForwardBase({
      repo: input.repo,
      base: input.base,
      integrationBranch: integrationBranch(input.name),
    });
    run.addLog(fastForwardLine(input.base, ff));
  }
  return finish(run, 'complete');
}

/** The reported issues' milestone joins the plan; the next round starts in a new run. */
async function nextRound(
  run: SagaRun,
  acceptance: Extract<AcceptanceResult, { accepted: false }>,
): Promise<never> {
  const planned = run.saga!;
  run.addLog(issuesReportedLine(acceptance.by, acceptance.issues.length, run.round + 1));
  run.setPlan({ ...planned, plan: withIssuesMilestone(planned.plan, acceptance.milestone) });
  run.round++;
  return continueFromState(run);
}

/**
 * A phase boundary: the saga goes on in a new run that starts from its state, once background work and
 * answers have settled. Each run's history stays small, and its start is the snapshot `saga continue`
 * resumes from when new code cannot replay a run (README: Versioning).
 */
async function continueFromState(run: SagaRun): Promise<never> {
  await run.settle();
  run.projector.stop(); // the next run has its own
  return continueAsNew<typeof sagaWorkflow>(run.input, run.carryState()!);
}

async function finish(run: SagaRun, end: SagaOutcome['phase']): Promise<SagaOutcome> {
  const { input } = run;
  run.setPhase(end);
  run.issue.send(endUpdate(end, run.progress.usage.costUsd));
  if (run.sagaDirReady) {
    // No saga worktree outlives the saga (branches stay); PROGRESS.md's last write in the same activity.
    run.projector.stop();
    const { logLine } = await run.quick.finishSagaRun({
      repo: input.repo,
      sagaName: input.name,
      sagaDir: input.sagaDir,
      workflowId: run.self,
      runId: workflowInfo().runId,
    });
    if (logLine) run.addStampedLog(logLine);
    await run.projector.ended();
  }
  await run.settle();
  return {
    phase: end,
    rounds: run.round,
    integrationBranch: integrationBranch(input.name),
    reportPath: run.reportPath,
  };
}

/** The failure ends the run: PROGRESS.md shows why, and chat (Slack, SAGA_NOTIFY_URL) hears it. */
async function fail(run: SagaRun, error: unknown): Promise<void> {
  run.setPhase('failed');
  run.failure = failureReason(error);
  run.addLog(`Failed: ${run.failure}`);
  run.projector.stop();
  // The saga's own failure is the one to report, not one of these writes.
  if (run.sagaDirReady) {
    await run.projector.writeOnce(workflowInfo().runId).catch(() => undefined);
    await run.projector.ended();
  }
  await run.quick
    .notifyFailure({
      saga: run.input.name,
      runId: workflowInfo().runId,
      reason: run.failure,
      uiUrl: run.status().uiUrl,
    })
    .catch(() => undefined);
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
