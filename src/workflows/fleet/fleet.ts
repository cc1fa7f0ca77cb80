/**
 * The worker fleet of one implementation round (docs/ARCHITECTURE.md, "the implementation phase"): one
 * object whose parts are fields, each a class over the same state, changed in place:
 * - `state` (fleet-state.ts): milestones, tasks, what each next delegation carries, events, live progress;
 * - `budget` (fleet-budget.ts): the saga budget (`budget.saga_usd`), its warning, question and grants;
 * - `tasks` (milestone-tasks.ts): one milestone's tasks scheduled into lanes, each outcome judged, a blocked
 *   task re-delegated, adjusted or asked about;
 * - `launcher` (fleet-launch.ts): a task child's input and its start;
 * - `answers` (fleet-answers.ts): the user's part in a blocked task (escalation, spec gap, spec changes);
 * - `checks` (unrunnable-checks.ts): checks that cannot run, asked about for a task or a milestone.
 * Here: one milestone's life (its tasks, integration, re-delegation of what integration sends back).
 * Workflow state (deterministic, no I/O but activities and child workflows).
 */
import {
  getExternalWorkflowHandle,
  log,
  patched,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import { workpadSignal } from '../../domain/saga/messages';
import { issueSyncWorkflowId } from '../../domain/tracker/issue-sync';
import { milestoneUpdate } from '../../domain/tracker/workpad-updates';
import { INTEGRATION_REDOS, integrationEscalation } from '../../domain/fleet/fleet-run';
import type { Plan, PlanMilestone } from '../../domain/plan';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { MilestoneState, PullRequestStatus, Usage } from '../../domain/contract/state';
import { milestoneOrder } from '../../domain/fleet/schedule';
import { openMilestonePr } from '../delivery/milestone-pr';
import { quickActivities } from '../activity-proxies';
import { ask } from '../ask';
import { FleetAnswers } from './fleet-answers';
import { FleetBudget } from './fleet-budget';
import { FleetLauncher } from './fleet-launch';
import { FleetState, type CarriedFleet } from './fleet-state';
import { integrateMilestone, type Redelegation } from './integration';
import { MilestoneTasks } from './milestone-tasks';
import { PATCHES } from '../patches';
import { CheckQuestions } from './unrunnable-checks';

/** What the fleet starts from: the saga, the plan, the round's settings and the carried state. */
export interface FleetInput {
  ctx: SagaContext;
  plan: Plan;
  round: number;
  lanes: number;
  carried?: CarriedFleet;
  /** The saga's pull requests so far (`delivery: pr`): a new milestone's PR stacks on the last. */
  pullRequests?: PullRequestStatus[];
}

export class Fleet {
  readonly ctx: SagaContext;
  readonly plan: Plan;
  readonly round: number;
  readonly lanes: number;
  readonly state: FleetState;
  readonly budget: FleetBudget;
  readonly tasks = new MilestoneTasks(this);
  readonly launcher = new FleetLauncher(this);
  readonly answers = new FleetAnswers(this);
  readonly checks = new CheckQuestions(this);
  /** The saga's pull requests, with those this phase opened (`delivery: pr`). */
  readonly pullRequests: PullRequestStatus[];

  constructor({ ctx, plan, round, lanes, carried, pullRequests }: FleetInput) {
    this.ctx = ctx;
    this.pullRequests = [...(pullRequests ?? [])];
    this.plan = plan;
    this.round = round;
    this.lanes = lanes;
    this.state = new FleetState(ctx.name, plan, carried);
    this.budget = new FleetBudget(this);
  }

  /** One milestone: run its tasks, integrate, and re-delegate what integration sends back until it holds. */
  async runMilestone(spec: PlanMilestone): Promise<'integrated' | 'aborted'> {
    const { ctx, state, budget } = this;
    const mState = state.milestone(spec.id);
    state.setMilestone(mState, 'running');
    let checkQuestions = 0;
    for (let failedIntegrations = 0; ;) {
      if (await this.tasks.run(spec)) return 'aborted';
      state.setMilestone(mState, 'integrating');
      setCurrentDetails(`Integrating milestone ${spec.id}`);
      const result = await integrateMilestone(
        ctx,
        spec,
        mState,
        this.round,
        (spentByIntegration) => budget.resolverGate(spentByIntegration),
        (line) => state.log(line),
      );
      this.spend(() => result.usage);
      if (budget.stopped) return 'aborted';
      if (result.ok) {
        state.integrated(mState, result.head);
        await this.recordMilestone(mState);
        await this.deliver(mState);
        await this.tellIssue();
        return 'integrated';
      }
      if (result.unrunnable) {
        await this.checks.askAboutMilestone(spec, result.unrunnable, ++checkQuestions);
        state.setMilestone(mState, 'running');
        continue;
      }
      failedIntegrations++;
      const userNote = await this.afterFailedIntegration(spec.id, failedIntegrations, result.redelegate);
      if (userNote === 'abort') return 'aborted';
      this.redelegate(result.redelegate, userNote);
      state.setMilestone(mState, 'running');
    }
  }

  /**
   * Spend of finished work, told to the budget (its warning and question follow the total). `spent` is read
   * after the total before it, so that it may settle a running task's share.
   */
  spend(spent: () => Usage | null | undefined): void {
    const before = this.budget.spent();
    this.state.addSpend(spent());
    this.budget.afterSpend(before);
  }

  /** The integrated milestone's task states go to its record file and leave the carried state. */
  private async recordMilestone(m: MilestoneState): Promise<void> {
    // Runs recorded before milestone records carried every task state.
    if (!patched(PATCHES.milestoneRecords)) return;
    const { workflowId, runId } = workflowInfo();
    await quickActivities(this.ctx.hostQueue).recordMilestone({
      sagaDir: this.ctx.sagaDir,
      workflowId,
      runId,
      milestone: m.id,
    });
    this.state.compact(m);
  }

  /** `delivery: pr`: the integrated milestone's branch pushed and its draft PR opened (or found). */
  private async deliver(m: MilestoneState): Promise<void> {
    if (!this.ctx.settings.delivery) return;
    const integratedIds = new Set(
      this.state.milestones.filter((x) => x.status === 'integrated').map((x) => x.id),
    );
    const order = milestoneOrder(this.plan.milestones.map((x) => ({ id: x.id, dependsOn: x.depends_on })));
    const pr = await openMilestonePr({
      ctx: this.ctx,
      plan: this.plan,
      milestone: m,
      integrated: [...order.filter((id) => integratedIds.has(id) && id !== m.id), m.id],
      milestones: this.state.milestones,
      known: this.pullRequests,
      usage: this.state.usage,
    });
    if (!pr) return;
    const i = this.pullRequests.findIndex((p) => p.number === pr.number);
    if (i === -1) this.pullRequests.push(pr);
    else this.pullRequests[i] = pr;
  }

  /** A saga from an issue: its workpad shows the milestones, the PRs so far and the cost (never fails). */
  private async tellIssue(): Promise<void> {
    if (!this.ctx.settings.intake) return;
    const update = milestoneUpdate(
      this.plan,
      this.state.milestones,
      this.pullRequests,
      this.state.usage.costUsd,
    );
    await getExternalWorkflowHandle(issueSyncWorkflowId(this.ctx.name))
      .signal(workpadSignal, update)
      .catch((error: unknown) => log.warn('Could not tell the issue sync', { error: String(error) }));
  }

  /**
   * Integration failed again: after INTEGRATION_REDOS failures in a row the user decides whether another
   * round is worth it. Returns the user's note for the re-delegated tasks (null: none), or 'abort'.
   */
  private async afterFailedIntegration(
    milestone: number,
    failures: number,
    redo: Redelegation[],
  ): Promise<string | null | 'abort'> {
    if (failures <= INTEGRATION_REDOS) return null;
    const answer = await ask(
      this.ctx.sagaWorkflowId,
      integrationEscalation(milestone, this.round, failures, redo),
    );
    if (answer.choice === 'abort') return 'abort';
    return answer.text ?? null;
  }

  /** Re-delegates what integration sent back, with the failure output as retained context. */
  private redelegate(redo: Redelegation[], userNote: string | null): void {
    const { state } = this;
    for (const r of redo) {
      state.redo(
        state.task(r.ref),
        { evidence: r.evidence, notes: [r.note, ...(r.details ?? []), ...(userNote ? [userNote] : [])] },
        { reason: r.note },
        r.rebaseOnto,
      );
    }
  }
}
