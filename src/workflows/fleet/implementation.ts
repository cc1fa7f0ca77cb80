/**
 * Implementation (docs/PROCEDURE.md §3, §4): the worker fleet. Milestones run in dependency order; for each one, its tasks
 * are scheduled into lanes (started as soon as their dependencies are done, never two with overlapping
 * `owns` at once) and run as child workflows; blocked tasks are re-delegated, adjusted or escalated while
 * the rest keeps running. Then the milestone is integrated and validated (integration.ts); what integration
 * sends back is re-delegated, and after repeated failures the user decides. All of it is the `Fleet`
 * (fleet.ts) and its parts; this file starts it, lists its handlers and runs the milestones in order.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { HISTORY_SOFT_LIMIT } from '../../domain/fleet/fleet-run';
import { milestoneOrder } from '../../domain/fleet/schedule';
import type { Plan } from '../../domain/plan';
import type { LiveProgress } from '../../domain/saga/phase-progress';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { PullRequestStatus, Usage } from '../../domain/contract/state';
import {
  implementationProgressQuery,
  interactionAnsweredSignal,
  taskUsageSignal,
} from '../../domain/saga/messages';
import { recordAnswer } from '../ask';
import { Fleet } from './fleet';
import type { CarriedFleet } from './fleet-state';

export interface ImplementationInput {
  ctx: SagaContext;
  plan: Plan;
  /** Milestones this round runs (a report round runs only its new milestone). */
  milestoneIds: number[];
  round: number;
  lanes: number;
  /** Carried over continue-as-new (`log`: this phase's lines so far, newest first). */
  carried?: CarriedFleet;
  /** The saga's pull requests so far (`delivery: pr`). */
  pullRequests?: PullRequestStatus[];
}

export interface ImplementationResult {
  outcome: 'integrated' | 'aborted';
  usage: Usage;
  /** The task and milestone states and log lines the saga takes over (absent from runs of older code). */
  progress?: LiveProgress;
}

export async function implementationWorkflow(input: ImplementationInput): Promise<ImplementationResult> {
  const fleet = new Fleet(input); // its state, budget and parts (fleet.ts)
  const { state, budget } = fleet;
  // The phase's API: the saga's status reads it, its tasks report their spend, answers to its questions come.
  setHandler(implementationProgressQuery, () => ({ ...state.live, budgetUsd: budget.limitUsd }));
  setHandler(taskUsageSignal, ({ ref, usage: spentByTask }) => {
    if (state.states.get(ref)?.status !== 'running') return; // a late report of a finished task
    budget.reportRunning(ref, spentByTask);
  });
  setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer));
  const finish = async (outcome: ImplementationResult['outcome']): Promise<ImplementationResult> => {
    await condition(allHandlersFinished);
    return { outcome, usage: state.usage, progress: state.live };
  };
  state.announceAdded();
  const order = milestoneOrder(input.plan.milestones.map((m) => ({ id: m.id, dependsOn: m.depends_on })));
  const runsHere = (id: number) => input.milestoneIds.includes(id);

  for (const id of order) {
    if (!runsHere(id) || state.milestone(id).status === 'integrated') continue;
    const outcome = await fleet.runMilestone(input.plan.milestones.find((m) => m.id === id)!);
    if (outcome === 'aborted') return finish('aborted');
    const moreToDo = order.some((m) => runsHere(m) && state.milestone(m).status !== 'integrated');
    if (moreToDo) await continueAsNewWhenLong(input, fleet);
  }
  return finish('integrated');
}

/** Continues as new between milestones once the history is long (the carried state goes with it). */
async function continueAsNewWhenLong(input: ImplementationInput, fleet: Fleet): Promise<void> {
  const { state } = fleet;
  const info = workflowInfo();
  if (!info.continueAsNewSuggested && info.historyLength <= HISTORY_SOFT_LIMIT) return;
  await condition(allHandlersFinished);
  await continueAsNew<typeof implementationWorkflow>({
    ...input,
    carried: { milestones: state.milestones, usage: state.usage, log: state.live.log },
    ...(fleet.pullRequests.length ? { pullRequests: fleet.pullRequests } : {}),
  });
}
