/**
 * The planning phase's state: the environment discovery found, the problem as the planner restated it,
 * the questions answered and the decisions taken (autonomous mode: asked back, defaults adopted), and the
 * plan under review; with the steps that write them down (SAGA.md's spec tree, decisions.md).
 */
import { setCurrentDetails } from '@temporalio/workflow';
import type { Plan } from '../../domain/plan';
import {
  autonomousDecisionEntries,
  rationaleBullets,
  type AdoptedDefault,
} from '../../domain/planning/autonomous-decisions';
import type { PlannerAnswer } from '../../domain/planning/elicitation';
import type { Environment } from '../../domain/planning/environment';
import type { CorrectableDecision } from '../../domain/planning/memory';
import { summarizePlan, type PlannerDecision } from '../../domain/planning/planner';
import { SAGA_FILES } from '../../domain/contract/saga-dir';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { PlanSummary, ProgressEvent, Usage } from '../../domain/contract/state';
import { activitiesFor } from '../activity-proxies';
import { PlannerRuns, type Planner, type PlanningSpend } from './planner-runs';
import { report, sagaLog } from '../shared';

export interface PlanningResult {
  approved: boolean;
  plan: Plan | null;
  environment: Environment;
  problem: string;
  versions: number;
  /** What the planner runs cost; the saga counts it in its total (absent in runs recorded before). */
  usage?: Usage;
  /** The saga budget after any raise answered during planning (null: none). */
  sagaBudgetUsd?: number | null;
  /** Progress of the phase's end (the plan's fate, the scratch worktree): the saga applies it, in order. */
  progress?: ProgressEvent[];
  /** The autonomous decisions the user may still correct (D1, D2, ...); absent when there are none. */
  decisions?: CorrectableDecision[];
}

export class PlanningSession {
  readonly quick;
  readonly long;
  readonly runs: PlannerRuns;
  readonly planner: Planner;
  readonly specPath: string;
  environment!: Environment;
  problem: string;
  readonly answers: PlannerAnswer[] = [];
  readonly decisions: PlannerDecision[] = [];
  /** Questions put to the user (autonomous mode's manifest counts them). */
  asked = 0;
  /** Autonomous until every substantive decision needs asking (then the questions are asked as in interactive mode). */
  autonomous: boolean;
  readonly substantive = { askedSubstantive: 0, decidedSubstantive: 0 };
  /** Autonomous mode: questions put to the user, and the defaults adopted when the user picked [D]. */
  readonly askedBack: string[] = [];
  readonly defaultsAdopted: AdoptedDefault[] = [];
  /** From earlier sagas' costs in this saga home (SAGA.md shows it too); null when there are none. */
  costEstimate: string | null = null;
  /** The plan under review: the latest version written to SAGA.md. */
  plan!: Plan;

  constructor(
    readonly ctx: SagaContext,
    readonly scratch: string,
    spend: PlanningSpend,
    /** Where the phase's final progress goes (returned with the result). */
    readonly closing: ProgressEvent[],
  ) {
    ({ quick: this.quick, long: this.long } = activitiesFor(ctx, 60 * 60_000));
    this.runs = new PlannerRuns(ctx, scratch, spend);
    this.planner = this.runs.planner;
    this.specPath = `${ctx.sagaDir}/${SAGA_FILES.saga}`;
    this.problem = ctx.goal;
    this.autonomous = ctx.flags.autonomous;
  }

  /** Discovery (docs/PROCEDURE.md §2.2): what the target repo is and which of its commands run (in the scratch worktree). */
  async discover(): Promise<void> {
    const { ctx } = this;
    setCurrentDetails('Discovering the environment of the target repo');
    this.environment = await this.long.discoverEnvironment({
      repo: ctx.repo,
      sagaDir: ctx.sagaDir,
      timeoutMs: 5 * 60_000,
      worktree: this.scratch,
      base: ctx.base,
      sandbox: ctx.settings.sandbox,
    });
    await sagaLog(
      ctx,
      `Discovery: ${this.environment.programType}; ${this.environment.commands.length} commands checked`,
    );
  }

  /** What drafting the plan starts from (the question loop's outcome). */
  draftContext(): Record<string, unknown> {
    const { problem, answers, decisions, environment, autonomous } = this;
    return { problem, answers, decisions, environment, autonomous };
  }

  /** The spec tree; in autonomous mode SAGA.md carries the rationale of the decisions taken. */
  async writeSpecTree(p: Plan): Promise<void> {
    const { ctx } = this;
    const written = await this.quick.writeSpecTree({
      sagaDir: ctx.sagaDir,
      name: ctx.name,
      plan: ctx.flags.autonomous
        ? {
            ...p,
            rationale: [
              ...(p.rationale ?? []),
              ...rationaleBullets(p.rationale?.length ? [] : this.decisions, this.defaultsAdopted),
            ],
          }
        : p,
      environment: this.environment,
      flags: ctx.flags,
      askedBack: this.askedBack,
    });
    this.costEstimate = written.costEstimate ?? null;
  }

  /** decisions.md (newest first): the defaults adopted by [D], then the planner's own decisions with citations. */
  async recordAutonomousDecisions(): Promise<void> {
    const entries = autonomousDecisionEntries(this.decisions, this.defaultsAdopted, new Date().toISOString());
    for (const entry of entries) await this.quick.prependDecision({ sagaDir: this.ctx.sagaDir, entry });
  }

  /** `saga status` shows the plan under review and what became of it. */
  planEvent(version: number, state: PlanSummary['state']): ProgressEvent {
    return { type: 'plan', summary: summarizePlan(this.plan, { version, state, specPath: this.specPath }) };
  }

  publish(version: number, state: PlanSummary['state']): Promise<void> {
    return report(this.ctx, this.planEvent(version, state));
  }

  /** The phase's result; `plan` null when no plan was drafted. */
  result(
    approved: boolean,
    plan: Plan | null,
    versions: number,
    corrections: { decisions?: CorrectableDecision[] } = {},
  ): PlanningResult {
    const { environment, problem } = this;
    return { approved, plan, environment, problem, versions, ...corrections };
  }
}
