/**
 * Messages of the saga workflows, defined once and shared by workflows, CLI, chat bridge and tests.
 * Every user interaction is addressed to the saga workflow (`saga-<name>`): it is the one address.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { BudgetGrant } from '../fleet/budget';
import type { ForgeEvent } from '../delivery/forge-shapes';
import type { TrackerWatchStatus } from '../tracker/issue-sync';
import type { WorkpadUpdate } from '../tracker/workpad';
import type { LiveProgress } from './phase-progress';
import type { Reconciliation, ReconciliationInput } from '../contract/reconciliation';
import type { SagaState } from './saga-state';
import type { Answer, Interaction, ProgressEvent, RespondInput, SagaStatus, Usage } from '../contract/state';

/** Answer a pending interaction. The validator rejects unknown ids and invalid choices. */
export const respondUpdate = defineUpdate<Answer, [RespondInput]>('respond');
/** `saga continue` → saga: what it found comparing the record with git and the evidence (validated). */
export const reconcileUpdate = defineUpdate<Reconciliation, [ReconciliationInput]>('reconcile');
/** Full status, as `saga status --json` prints it. */
export const statusQuery = defineQuery<SagaStatus>('status');
/** The answers recorded so far, oldest first (the projector writes decisions.md from them). */
export const answersQuery = defineQuery<Answer[]>('answers');
/** The state a new run resumes from; null before the plan is approved. */
export const carryQuery = defineQuery<SagaState | null>('carry');

/**
 * Implementation phase: its task and milestone states, usage and log lines as they are now (readers merge
 * them into the saga's status while the phase runs; see src/status/live-status.ts).
 */
export const implementationProgressQuery = defineQuery<LiveProgress>('progress');

/** Child → saga: a phase workflow needs a person (a batch of questions comes as one signal, in order). */
export const interactionOpenedSignal = defineSignal<Interaction[]>('interactionOpened');
/** Saga → child: the person answered. */
export const interactionAnsweredSignal = defineSignal<[Answer]>('interactionAnswered');
/** Planning and validation → saga: progress for the status view (the plan summary, log lines). */
export const progressSignal = defineSignal<[ProgressEvent]>('progress');
/** Child → saga: several state changes in one signal. */
export const progressBatchSignal = defineSignal<[ProgressEvent[]]>('progressBatch');

/** Task → fleet after each agent run: the task delegation's usage so far (a total, not a delta). */
export const taskUsageSignal = defineSignal<[{ ref: string; usage: Usage }]>('taskUsage');
/** Fleet → task: the saga budget changed (crossed, raised) or running agents are to stop now. */
export const budgetGrantSignal = defineSignal<[BudgetGrant]>('budgetGrant');

/**
 * `saga chat serve` (a signed forge webhook) → saga → its delivery watch: a pull request's CI or review
 * changed, look now instead of at the next timer. Carries nothing the saga trusts: it only wakes the watch.
 */
export const forgeEventSignal = defineSignal<[ForgeEvent]>('forgeEvent');
/** Saga → its delivery watch: the user answered acceptance; finish the fix at hand, then return. */
export const deliveryStopSignal = defineSignal('deliveryStop');

/**
 * Saga or fleet → the saga's issue sync (`saga-<name>-issue`), at phase boundaries only: what the workpad
 * shows now (parts left out stay as they were). An update with phase `done` or `cancelled` is the last.
 */
export const workpadSignal = defineSignal<[WorkpadUpdate]>('workpad');
/**
 * Saga → its issue sync (`intake.questions: issue`): the questions pending now, whole list each time (new
 * ones are posted; none left stops reading replies).
 */
export const issueQuestionsSignal = defineSignal<[Interaction[]]>('issueQuestions');
/** `saga watch --stop` → the watch: start nothing more, and end. */
export const watchStopSignal = defineSignal('watchStop');
/** The watch as `saga list` shows it. */
export const watchStatusQuery = defineQuery<TrackerWatchStatus>('watchStatus');
