/**
 * The planner's runs during planning: each gated by the saga budget (the `budget` question when planning
 * has spent it all), its answer validated and retried with the errors, and the user asked after too many
 * invalid answers.
 */
import { log, setCurrentDetails } from '@temporalio/workflow';
import { budgetInteraction, raisedLimit, remainingUsd, runCapUsd } from '../domain/fleet/budget';
import type { SagaContext } from '../domain/saga/saga-input';
import type { Usage } from '../domain/saga/state';
import { addUsage } from '../domain/agents/usage';
import { activitiesFor } from './activity-proxies';
import { ask } from './ask';
import { plannerProfile, sagaLog } from './shared';

const MAX_INVALID_OUTPUTS = 3;

/** The saga budget as planning sees it: its limit (raised by answers) and the planner runs' spend. */
export interface PlanningSpend {
  usage: Usage;
  sagaBudgetUsd: number | null;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export function plannerRuns(ctx: SagaContext, scratch: string, spend: PlanningSpend) {
  // Discovery and planner runs: up to an hour each.
  const { long } = activitiesFor(ctx, 60 * 60_000);
  let budgetQuestions = 0;
  /** The user answered a budget question with stop: no planner run starts any more. */
  let budgetStopped = false;

  /**
   * The saga budget's gate before a planner run: asks (raise / stop) while planning has spent it all; the
   * cap for the run (null: no budget), or 'stop' when the user stopped the saga.
   */
  async function plannerBudget(): Promise<number | null | 'stop'> {
    for (;;) {
      if (budgetStopped) return 'stop';
      const limit = spend.sagaBudgetUsd;
      const spent = spend.usage.costUsd;
      if (limit === null) return null;
      if (spent < limit) return runCapUsd(remainingUsd(limit, spent));
      setCurrentDetails('Waiting for a budget answer before the next planner run');
      const question = budgetInteraction(
        `budget-planning-${Math.round(spent * 100)}-of-${Math.round(limit * 100)}-q${++budgetQuestions}`,
        spent,
        limit,
        ctx.settings.budget.onExhausted,
      );
      const answer = await ask(ctx.sagaWorkflowId, question);
      await sagaLog(
        ctx,
        `Budget question answered by ${answer.user}: ${answer.choice}${answer.text ? ` ${answer.text}` : ''}`,
      );
      if (answer.choice === 'stop') {
        await sagaLog(ctx, 'Planning stopped at the saga budget');
        budgetStopped = true;
        return 'stop';
      }
      try {
        spend.sagaBudgetUsd = raisedLimit(answer.text ?? '', limit);
        await sagaLog(ctx, `Saga budget is now $${spend.sagaBudgetUsd}`);
      } catch {
        // Refused by the respond validator; asked again.
      }
    }
  }

  /** Runs the planner at a stage and validates its answer; null when the user aborted or the budget stopped it. */
  async function planner<T>(
    stage: string,
    context: Record<string, unknown>,
    validate: (raw: unknown) => Validation<T>,
  ): Promise<T | null> {
    let errors: string[] = [];
    for (let round = 1; ; round++) {
      for (let attempt = 1; attempt <= MAX_INVALID_OUTPUTS; attempt++) {
        const cap = await plannerBudget();
        if (cap === 'stop') return null;
        const run = await long.runRoleAgent({
          template: `planner-${stage === 'revise' ? 'revise' : stage}`,
          sagaName: ctx.name,
          sagaDir: ctx.sagaDir,
          role: 'planner',
          stage,
          taskId: 'plan',
          attempt,
          profile: plannerProfile(ctx),
          workdir: scratch,
          context: { ...context, goal: ctx.goal, stage, previousErrors: errors },
          // Earlier sagas' decisions and learnings of this repo, read into the prompt with their citations.
          memory: { repo: ctx.repo },
          attachments: [],
          runLabel: `planner-${stage}-${String(context.round ?? context.version ?? 1)}-${round}-a${attempt}`,
          ...(cap !== null ? { maxBudgetUsd: cap } : {}),
        });
        spend.usage = addUsage(spend.usage, run.usage);
        const raw = run.report ?? null;
        const checked =
          raw === null
            ? { ok: false as const, errors: [run.reportError ?? 'no JSON answer'] }
            : validate(raw);
        if (checked.ok) return checked.value;
        errors = checked.errors;
        log.warn('Planner output invalid', { stage, attempt, errors });
      }
      const answer = await ask(ctx.sagaWorkflowId, {
        id: `planner-invalid-${stage}-${String(context.round ?? context.version ?? 1)}-${round}`,
        kind: 'question',
        prompt:
          `The planner gave an invalid answer ${MAX_INVALID_OUTPUTS} times at stage '${stage}':\n- ` +
          errors.slice(0, 10).join('\n- '),
        options: ['retry', 'abort'],
        recommended: 0,
      });
      if (answer.choice === 'abort') return null;
    }
  }

  return { planner, budgetStopped: () => budgetStopped };
}
