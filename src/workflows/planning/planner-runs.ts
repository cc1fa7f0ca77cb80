/**
 * The planner's runs during planning: each gated by the saga budget (the `budget` question when planning
 * has spent it all), its answer validated and retried with the errors, and the user asked after too many
 * invalid answers.
 */
import { log, setCurrentDetails } from '@temporalio/workflow';
import { addUsage } from '../../domain/agents/usage';
import {
  budgetAnswerLine,
  budgetInteraction,
  budgetRaisedLine,
  isExhausted,
  planningBudgetQuestionId,
  raisedLimit,
  remainingUsd,
  runCapUsd,
} from '../../domain/fleet/budget';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { Usage } from '../../domain/contract/state';
import { processEndWhy } from '../../domain/text/process-end';
import { activitiesFor } from '../activity-proxies';
import { ask } from '../ask';
import { plannerProfile, sagaLog } from '../shared';

const MAX_INVALID_OUTPUTS = 3;

/** The saga budget as planning sees it: its limit (raised by answers) and the planner runs' spend. */
export interface PlanningSpend {
  usage: Usage;
  sagaBudgetUsd: number | null;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * A stage a planner of an earlier protocol may not know: when it answers nothing at all (exit 0, no report,
 * no JSON) the stage yields `value` instead of being asked again, and `note` is logged and written to
 * decisions.md, once per planning phase.
 */
export interface OptionalStage<T> {
  value: T;
  note: string;
}

/** Runs the planner at a stage and validates its answer; null when the user aborted or the budget stopped it. */
export type Planner = <T>(
  stage: string,
  context: Record<string, unknown>,
  validate: (raw: unknown) => Validation<T>,
  optional?: OptionalStage<T>,
) => Promise<T | null>;

/** A run's answer, or why there is none; `silent` when it exited 0 and answered nothing at all. */
type RunAnswer = { ok: true; value: unknown } | { ok: false; errors: string[]; silent: boolean };

export class PlannerRuns {
  // Discovery and planner runs: up to an hour each.
  private readonly long;
  private budgetQuestions = 0;
  /** The user answered a budget question with stop: no planner run starts any more. */
  private stopped = false;
  /** Optional stages whose silence has been noted already. */
  private readonly silenceNoted = new Set<string>();

  constructor(
    private readonly ctx: SagaContext,
    private readonly scratch: string,
    private readonly spend: PlanningSpend,
  ) {
    this.long = activitiesFor(ctx, 60 * 60_000).long;
  }

  budgetStopped(): boolean {
    return this.stopped;
  }

  /** A function (not a method), so the planning steps can be handed it. */
  readonly planner: Planner = async (stage, context, validate, optional) => {
    let errors: string[] = [];
    for (let round = 1; ; round++) {
      for (let attempt = 1; attempt <= MAX_INVALID_OUTPUTS; attempt++) {
        const cap = await this.budgetGate();
        if (cap === 'stop') return null;
        const raw = await this.run(stage, context, { errors, round, attempt, cap });
        if (optional && !raw.ok && raw.silent) return this.noteSilence(stage, optional);
        const checked = raw.ok ? validate(raw.value) : raw;
        if (checked.ok) return checked.value;
        errors = checked.errors;
        log.warn('Planner output invalid', { stage, attempt, errors });
      }
      if (!(await this.retryAfterInvalid(stage, context, round, errors))) return null;
    }
  };

  /** One planner run; its JSON answer, or why there is none. */
  private async run(
    stage: string,
    context: Record<string, unknown>,
    at: { errors: string[]; round: number; attempt: number; cap: number | null },
  ): Promise<RunAnswer> {
    const { ctx } = this;
    const run = await this.long.runRoleAgent({
      template: `planner-${stage === 'revise' ? 'revise' : stage}`,
      sagaName: ctx.name,
      sagaDir: ctx.sagaDir,
      role: 'planner',
      stage,
      taskId: 'plan',
      attempt: at.attempt,
      profile: plannerProfile(ctx),
      workdir: this.scratch,
      // The text, when the saga came from one: fenced and marked untrusted (tracker/intake-source.ts).
      context: {
        ...context,
        goal: ctx.goal,
        request: ctx.source?.request ?? null,
        stage,
        previousErrors: at.errors,
      },
      // Earlier sagas' decisions and learnings of this repo, read into the prompt with their citations.
      memory: { repo: ctx.repo },
      attachments: [],
      runLabel: `planner-${stage}-${runKey(context)}-${at.round}-a${at.attempt}`,
      ...(at.cap !== null ? { maxBudgetUsd: at.cap } : {}),
    });
    this.spend.usage = addUsage(this.spend.usage, run.usage);
    const raw = run.report ?? null;
    if (raw !== null) return { ok: true, value: raw };
    const silent = run.exitCode === 0 && run.reportError === null;
    // Why there is no answer, in the process's own words: a crash's stderr says more than "no JSON answer".
    const ended = [run.failure?.message, `planner ${processEndWhy(run)}`].filter(Boolean).join('; ');
    return { ok: false, errors: [`${run.reportError ?? 'no JSON answer'} (${ended})`], silent };
  }

  /** An optional stage the planner answered with nothing: its stand-in value, said once. */
  private async noteSilence<T>(stage: string, optional: OptionalStage<T>): Promise<T> {
    if (!this.silenceNoted.has(stage)) {
      this.silenceNoted.add(stage);
      await activitiesFor(this.ctx).quick.prependDecision({
        sagaDir: this.ctx.sagaDir,
        entry: {
          at: new Date().toISOString(),
          title: `Planner stage '${stage}' unanswered`,
          lines: [optional.note],
        },
      });
      await sagaLog(this.ctx, optional.note);
    }
    return optional.value;
  }

  /** After too many invalid answers the user says whether to try again. */
  private async retryAfterInvalid(
    stage: string,
    context: Record<string, unknown>,
    round: number,
    errors: string[],
  ): Promise<boolean> {
    const answer = await ask(this.ctx.sagaWorkflowId, {
      id: `planner-invalid-${stage}-${runKey(context)}-${round}`,
      kind: 'question',
      prompt:
        `The planner gave an invalid answer ${MAX_INVALID_OUTPUTS} times at stage '${stage}':\n- ` +
        errors.slice(0, 10).join('\n- '),
      options: ['retry', 'abort'],
      recommended: 0,
    });
    return answer.choice !== 'abort';
  }

  /**
   * The saga budget's gate before a planner run: asks (raise / stop) while planning has spent it all; the
   * cap for the run (null: no budget), or 'stop' when the user stopped the saga.
   */
  private async budgetGate(): Promise<number | null | 'stop'> {
    for (;;) {
      if (this.stopped) return 'stop';
      const limit = this.spend.sagaBudgetUsd;
      const spent = this.spend.usage.costUsd;
      if (limit === null) return null;
      if (!isExhausted(limit, spent)) return runCapUsd(remainingUsd(limit, spent));
      if ((await this.askBudget(spent, limit)) === 'stop') return 'stop';
    }
  }

  /** The budget question: stop, or a raised limit (a limit the validator refused is asked again). */
  private async askBudget(spent: number, limit: number): Promise<'stop' | 'asked'> {
    const { ctx } = this;
    setCurrentDetails('Waiting for a budget answer before the next planner run');
    const question = budgetInteraction(
      planningBudgetQuestionId(spent, limit, ++this.budgetQuestions),
      spent,
      limit,
      ctx.settings.budget.onExhausted,
    );
    const answer = await ask(ctx.sagaWorkflowId, question);
    await sagaLog(ctx, budgetAnswerLine(answer));
    if (answer.choice === 'stop') {
      await sagaLog(ctx, 'Planning stopped at the saga budget');
      this.stopped = true;
      return 'stop';
    }
    try {
      this.spend.sagaBudgetUsd = raisedLimit(answer.text ?? '', limit);
      await sagaLog(ctx, budgetRaisedLine(this.spend.sagaBudgetUsd));
    } catch {
      // Refused by the respond validator; asked again.
    }
    return 'asked';
  }
}

/** The round or version a planner run belongs to, in its labels and question ids. */
const runKey = (context: Record<string, unknown>): string => String(context.round ?? context.version ?? 1);
