/**
 * Implementation (docs/PROCEDURE.md §3, §4): the worker fleet. Milestones run in dependency order; for each one, its tasks
 * are scheduled into lanes (started as soon as their dependencies are done, never two with overlapping
 * `owns` at once) and run as child workflows; blocked tasks are re-delegated, adjusted or escalated while
 * the rest keeps running (milestone-tasks.ts). Then the milestone is integrated and validated
 * (integration.ts); what integration sends back is re-delegated, and after repeated failures the user decides.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { HISTORY_SOFT_LIMIT, INTEGRATION_REDOS, integrationEscalation } from '../domain/fleet/fleet-run';
import { milestoneOrder } from '../domain/fleet/schedule';
import type { Plan, PlanMilestone } from '../domain/plan';
import type { LiveProgress } from '../domain/saga/phase-progress';
import type { SagaContext } from '../domain/saga/saga-input';
import type { MilestoneState, Usage } from '../domain/saga/state';
import { quickActivities } from './activity-proxies';
import { ask } from './ask';
import { implementationProgressQuery, taskUsageSignal } from '../domain/saga/messages';
import { FleetBudget } from './fleet-budget';
import { FleetState, type Fleet } from './fleet-state';
import { integrateMilestone, type Redelegation } from './integration';
import { askAboutMilestoneChecks } from './unrunnable-checks';
import { runMilestoneTasks } from './milestone-tasks';
import { PATCHES } from './patches';

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

export async function implementationWorkflow(input: ImplementationInput): Promise<ImplementationResult> {
  const fleet = startFleet(input);
  const { state } = fleet;
  const finish = async (outcome: ImplementationResult['outcome']): Promise<ImplementationResult> => {
    await condition(allHandlersFinished);
    return { outcome, usage: state.usage, progress: state.live };
  };
  state.announceAdded();
  const order = milestoneOrder(input.plan.milestones.map((m) => ({ id: m.id, dependsOn: m.depends_on })));
  const runsHere = (id: number) => input.milestoneIds.includes(id);

  for (const id of order) {
    if (!runsHere(id) || state.milestone(id).status === 'integrated') continue;
    const outcome = await runMilestone(
      fleet,
      input.plan.milestones.find((m) => m.id === id)!,
    );
    if (outcome === 'aborted') return finish('aborted');
    const moreToDo = order.some((m) => runsHere(m) && state.milestone(m).status !== 'integrated');
    if (moreToDo) await continueAsNewWhenLong(input, state);
  }
  return finish('integrated');
}

/** The fleet's state and budget, and the handlers that read and feed them. */
function startFleet(input: ImplementationInput): Fleet {
  const { ctx, plan, round, lanes } = input;
  const state = new FleetState(ctx.name, plan, input.carried);
  const budget = new FleetBudget({
    ctx,
    round,
    finishedUsd: () => state.usage.costUsd,
    log: (line) => state.log(line),
    answered: (answer) => state.events.push({ type: 'budget', answer }),
  });
  setHandler(implementationProgressQuery, () => ({ ...state.live, budgetUsd: budget.limitUsd }));
  setHandler(taskUsageSignal, ({ ref, usage: spentByTask }) => {
    if (state.states.get(ref)?.status !== 'running') return; // a late report of a finished task
    budget.reportRunning(ref, spentByTask);
  });
  return { ctx, plan, round, lanes, state, budget };
}

/** One milestone: run its tasks, integrate, and re-delegate what integration sends back until it holds. */
async function runMilestone(fleet: Fleet, spec: PlanMilestone): Promise<'integrated' | 'aborted'> {
  const { ctx, state, budget } = fleet;
  const mState = state.milestone(spec.id);
  state.setMilestone(mState, 'running');
  let checkQuestions = 0;
  for (let failedIntegrations = 0; ;) {
    if (await runMilestoneTasks(fleet, spec)) return 'aborted';
    state.setMilestone(mState, 'integrating');
    setCurrentDetails(`Integrating milestone ${spec.id}`);
    const result = await integrateMilestone(
      ctx,
      spec,
      mState,
      fleet.round,
      (spentByIntegration) => budget.resolverGate(spentByIntegration),
      (line) => state.log(line),
    );
    state.spend(budget, () => result.usage);
    if (budget.stopped) return 'aborted';
    if (result.ok) {
      state.integrated(mState, result.head);
      await recordMilestone(fleet, mState);
      return 'integrated';
    }
    if (result.unrunnable) {
      await askAboutMilestoneChecks(fleet, spec, result.unrunnable, ++checkQuestions);
      state.setMilestone(mState, 'running');
      continue;
    }
    failedIntegrations++;
    const userNote = await afterFailedIntegration(fleet, spec.id, failedIntegrations, result.redelegate);
    if (userNote === 'abort') return 'aborted';
    redelegate(fleet, result.redelegate, userNote);
    state.setMilestone(mState, 'running');
  }
}

/** The integrated milestone's task states go to its record file and leave the carried state. */
async function recordMilestone(fleet: Fleet, m: MilestoneState): Promise<void> {
  // Runs recorded before milestone records carried every task state.
  if (!patched(PATCHES.milestoneRecords)) return;
  const { workflowId, runId } = workflowInfo();
  await quickActivities(fleet.ctx.hostQueue).recordMilestone({
    sagaDir: fleet.ctx.sagaDir,
    workflowId,
    runId,
    milestone: m.id,
  });
  fleet.state.compact(m);
}

/**
 * Integration failed again: after INTEGRATION_REDOS failures in a row the user decides whether another round
 * is worth it. Returns the user's note for the re-delegated tasks (null: none), or 'abort'.
 */
async function afterFailedIntegration(
  fleet: Fleet,
  milestone: number,
  failures: number,
  redo: Redelegation[],
): Promise<string | null | 'abort'> {
  if (failures <= INTEGRATION_REDOS) return null;
  const answer = await ask(
    fleet.ctx.sagaWorkflowId,
    integrationEscalation(milestone, fleet.round, failures, redo),
  );
  if (answer.choice === 'abort') return 'abort';
  return answer.text ?? null;
}

/** Re-delegates what integration sent back, with the failure output as retained context. */
function redelegate(fleet: Fleet, redo: Redelegation[], userNote: string | null): void {
  for (const r of redo) {
    fleet.state.redo(
      fleet.state.task(r.ref),
      { evidence: r.evidence, notes: [r.note, ...(r.details ?? []), ...(userNote ? [userNote] : [])] },
      { reason: r.note },
      r.rebaseOnto,
    );
  }
}

/** Continues as new between milestones once the history is long (the carried state goes with it). */
async function continueAsNewWhenLong(input: ImplementationInput, state: FleetState): Promise<void> {
  const info = workflowInfo();
  if (!info.continueAsNewSuggested && info.historyLength <= HISTORY_SOFT_LIMIT) return;
  await condition(allHandlersFinished);
  await continueAsNew<typeof implementationWorkflow>({
    ...input,
    carried: { milestones: state.milestones, usage: state.usage, log: state.live.log },
  });
}
