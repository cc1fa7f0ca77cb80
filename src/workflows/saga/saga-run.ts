/**
 * The saga workflow's state in one run: its phase, the approved plan, progress, log and the interactions it
 * waits for; the methods its queries, updates and signals call (registered in sagaWorkflow's handler block,
 * saga.ts); and the state a next run carries over (continue-as-new at a phase boundary, or `saga continue`).
 */
import { allHandlersFinished, condition, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import { addUsage, noUsage } from '../../domain/agents/usage';
import { summarizePlan } from '../../domain/planning/planner';
import type { Plan } from '../../domain/plan';
import { cappedLine } from '../../domain/text/caps';
import { reconciliationLogLines } from '../../domain/record/reconciliation';
import { type Reconciliation, type ReconciliationInput } from '../../domain/contract/reconciliation';
import { integrationBranch, uiWorkflowUrl } from '../../domain/contract/naming';
import {
  mergeLogs,
  reduceProgress,
  type LiveProgress,
  type ProgressView,
} from '../../domain/saga/phase-progress';
import { answeredLine, waitingLine } from '../../domain/saga/rounds';
import { SAGA_FILES } from '../../domain/contract/saga-dir';
import type { WatchMemory } from '../../domain/delivery/watch-rules';
import type { SagaInput } from '../../domain/saga/saga-input';
import { SAGA_LOG_KEEP, SAGA_STATE_VERSION, type SagaState } from '../../domain/saga/saga-state';
import { SagaAwaitingInput, SagaPhase } from '../../domain/contract/search-attributes';
import {
  isEndedPhase,
  type Answer,
  type ExitResult,
  type Interaction,
  type Phase,
  type ProgressEvent,
  type SagaStatus,
  type Usage,
} from '../../domain/contract/state';
import { quickActivities } from '../activity-proxies';
import { ask, askAll } from '../ask';
import { InteractionEffects } from './interaction-effects';
import { InteractionHub } from './interaction-hub';
import { IssueLink } from './issue-link';
import { ProgressProjector } from './progress-projector';
import type { PlannedSaga } from './saga-intake';
import { SearchAttributeBatch } from './search-attribute-batch';
import { trackerRefText } from '../../domain/tracker/tracker-ref';

export class SagaRun {
  readonly self = workflowInfo().workflowId;
  readonly quick: ReturnType<typeof quickActivities>;
  private readonly specPath: string;
  /** Whether this run started from a carried state (an approved plan), not from intake. */
  readonly carried: boolean;
  phase: Phase = 'planning';
  /** The approved plan and its context; null until planning approves one. */
  saga: PlannedSaga | null;
  executionModeLabel: string;
  lanes: number;
  progress: ProgressView;
  round: number;
  reportPath: string | null = null;
  /** Why the saga failed (one line); set once, when it does. */
  failure: string | null = null;
  readonly log: string[];
  sagaDirReady: boolean;
  /** What the latest `saga continue` found comparing this record with git and the evidence. */
  reconciliation: Reconciliation | null;
  /** The latest final validation's results (the board and `saga status --json` show them). */
  exitResults: ExitResult[] | null;
  /** What the delivery watches did so far (`delivery: pr`): the next watch goes on from it. */
  deliveryMemory: WatchMemory | null;
  /** Chat notifications, reminders and decisions.md entries around interactions (never blocking the hub). */
  readonly effects: InteractionEffects;
  readonly hub: InteractionHub;
  /** The issue the saga came from (`saga start --from`, `saga watch`): its sync's workpad and questions. */
  readonly issue: IssueLink;
  readonly projector: ProgressProjector;
  private readonly attributes = new SearchAttributeBatch();
  /** The SagaAwaitingInput search attribute as last set (a new run starts with the default, false). */
  private awaitingInput = false;
  /** Whether this run has set its phase (each upsert is a history event: a phase set again is skipped). */
  private phaseSet = false;

  /** `carry`: the state this run starts from, in the current version (absent for a new saga). */
  constructor(
    readonly input: SagaInput,
    carry: SagaState | undefined,
  ) {
    this.carried = carry !== undefined;
    this.quick = quickActivities(input.hostQueue);
    this.specPath = `${input.sagaDir}/${SAGA_FILES.saga}`;
    this.saga = carry ? plannedSaga(carry) : null;
    this.executionModeLabel = carry?.executionModeLabel ?? 'pending';
    this.lanes = carry?.lanes ?? 1;
    this.progress = {
      milestones: carry?.milestones ?? [],
      usage: carry?.usage ?? noUsage(),
      // Sent by the planning phase while it runs; a carried run only knows the approved plan.
      planSummary: carry ? this.summary(carry.plan, carry.planVersion) : null,
      ...(carry?.pullRequests ? { pullRequests: carry.pullRequests } : {}),
    };
    this.round = carry?.round ?? 1;
    this.log = carry?.log ?? [];
    this.sagaDirReady = carry !== undefined;
    this.reconciliation = carry?.reconciliation ?? null;
    this.exitResults = carry?.exitResults ?? null;
    this.deliveryMemory = carry?.deliveryMemory ?? null;
    this.effects = new InteractionEffects({
      saga: input.name,
      sagaDir: input.sagaDir,
      hostQueue: input.hostQueue,
      uiUrl: () => this.status().uiUrl,
      pending: () => this.hub.list(),
      noChatSince: carry?.noChatSince ?? null,
    });
    this.hub = new InteractionHub(carry?.hub, (change) => this.interactionChanged(change));
    this.issue = new IssueLink(input, carry?.ctx.settings.intake, () => this.hub.list());
    this.projector = new ProgressProjector(
      this.quick,
      { sagaDir: input.sagaDir, workflowId: this.self },
      input.hostQueue,
      () => this.sagaDirReady,
    );
  }

  /** A line already stamped with its time (as an activity wrote it) becomes the newest. */
  addStampedLog(stamped: string): void {
    this.log.unshift(cappedLine(stamped));
    // PROGRESS.md keeps the whole log, merged from this window at every write.
    this.log.length = Math.min(this.log.length, SAGA_LOG_KEEP);
  }

  addLog(line: string): void {
    this.addStampedLog(`${new Date().toISOString()} ${line}`);
  }

  setPhase(next: Phase): void {
    if (this.phaseSet && next === this.phase) return;
    this.phaseSet = true;
    this.phase = next;
    this.attributes.set({ key: SagaPhase, value: next });
    setCurrentDetails(`Phase: ${next}`);
    this.addLog(`Phase: ${next}`);
  }

  applyProgress(event: ProgressEvent): void {
    const next = reduceProgress(this.progress, event);
    this.progress = next.view;
    next.log.forEach((line) => this.addLog(line));
  }

  addUsage(usage: Usage): void {
    this.progress = { ...this.progress, usage: addUsage(this.progress.usage, usage) };
  }

  /** The implementation phase kept its task states and log lines itself (readers merged them while it ran). */
  takeOverProgress(usage: Usage, live: LiveProgress | undefined): void {
    this.progress = { ...this.progress, usage, milestones: live?.milestones ?? this.progress.milestones };
    if (live) this.log.splice(0, this.log.length, ...mergeLogs(this.log, live.log));
  }

  /** The modes are resolved (the status shows them from now on). */
  modesResolved(modes: { lanes: number; executionModeLabel: string }): void {
    this.lanes = modes.lanes;
    this.executionModeLabel = modes.executionModeLabel;
  }

  /** The plan changed (a round's issues, updated exit criteria): the status shows it approved. */
  setPlan(planned: PlannedSaga): void {
    this.saga = planned;
    this.progress = {
      ...this.progress,
      planSummary: this.summary(planned.plan, this.progress.planSummary?.version ?? null),
    };
  }

  /** Asks from the saga itself: the question opens in its own hub (no signal). */
  ask(request: Parameters<typeof ask>[1]): Promise<Answer> {
    return ask(this.self, request, (i) => this.hub.open(i));
  }

  askAll(requests: Parameters<typeof askAll>[1]): Promise<Answer[]> {
    return askAll(this.self, requests, (i) => this.hub.open(i));
  }

  /**
   * Before the run ends or continues as new: chat notifications in flight, answers on their way to the
   * workflows that asked and updates being handled settle first, so the completion is not rejected and no
   * answer is lost.
   */
  async settle(): Promise<void> {
    await this.effects.settled();
    await this.hub.delivered();
    await this.issue.settled();
    await condition(allHandlersFinished);
  }

  status(): SagaStatus {
    const { input } = this;
    return {
      name: input.name,
      workflowId: this.self,
      runId: workflowInfo().runId,
      phase: this.phase,
      goal: input.goal,
      repo: input.repo,
      configFile: input.configFile ?? null,
      ...(input.source ? { source: { ref: trackerRefText(input.source.ref), url: input.source.url } } : {}),
      flags: input.flags,
      executionMode: this.executionModeLabel,
      // A saga that ended (cancelled while it waited) asks nothing more: its open questions go unanswered.
      pending: isEndedPhase(this.phase) ? [] : this.hub.list(),
      milestones: this.progress.milestones,
      integrationBranch: integrationBranch(input.name),
      sagaDir: input.sagaDir,
      uiUrl: input.uiBaseUrl ? uiWorkflowUrl(input.uiBaseUrl, workflowInfo().namespace, this.self) : '',
      round: this.round,
      hostQueue: input.hostQueue,
      usage: this.progress.usage,
      planSummary: this.progress.planSummary,
      log: this.log,
      error: this.failure,
      reconciliation: this.reconciliation,
      ...(this.exitResults ? { exitResults: this.exitResults } : {}),
      budgetUsd: this.saga?.ctx.settings.budget.sagaUsd ?? null,
      ...(this.progress.pullRequests ? { pullRequests: this.progress.pullRequests } : {}),
    };
  }

  /** What a new run needs to resume without redoing finished work; null until the plan is approved. */
  carryState(): SagaState | null {
    if (!this.saga) return null;
    return {
      version: SAGA_STATE_VERSION,
      ...this.saga,
      planVersion: this.progress.planSummary?.version ?? null,
      executionModeLabel: this.executionModeLabel,
      lanes: this.lanes,
      milestones: this.progress.milestones,
      round: this.round,
      hub: this.hub.snapshot(),
      log: this.log,
      usage: this.progress.usage,
      noChatSince: this.effects.carried(),
      reconciliation: this.reconciliation,
      ...(this.exitResults ? { exitResults: this.exitResults } : {}),
      ...(this.progress.pullRequests ? { pullRequests: this.progress.pullRequests } : {}),
      ...(this.deliveryMemory ? { deliveryMemory: this.deliveryMemory } : {}),
    };
  }

  private summary(plan: Plan, version: number | null) {
    return summarizePlan(plan, { version, state: 'approved', specPath: this.specPath });
  }

  /** What `saga continue` found (the reconcile update): kept for the status and logged. */
  reconcile(found: ReconciliationInput): Reconciliation {
    this.reconciliation = { ...found, at: new Date().toISOString() };
    reconciliationLogLines(found).forEach((line) => this.addLog(line));
    return this.reconciliation;
  }

  private interactionChanged({ opened, answered }: { opened?: Interaction; answered?: Answer }): void {
    if (opened) this.addLog(waitingLine(opened));
    if (opened) this.effects.opened(opened);
    if (answered) this.effects.answered(answered);
    if (answered) this.addLog(answeredLine(answered));
    // Only a change of the value is recorded (each upsert is a history event).
    const waiting = this.hub.list().length > 0;
    if (waiting !== this.awaitingInput) this.attributes.set({ key: SagaAwaitingInput, value: waiting });
    this.awaitingInput = waiting;
    this.issue.questionsChanged();
  }
}

/** The approved plan and its context as a carried state holds them. */
function plannedSaga(carry: SagaState): PlannedSaga {
  return {
    ctx: carry.ctx,
    plan: carry.plan,
    problem: carry.problem,
    environment: carry.environment,
    ...(carry.decisions ? { decisions: carry.decisions } : {}),
  };
}
