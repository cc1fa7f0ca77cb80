/**
 * Unachievable validation in the validation phase: the finding noted (a Deviation line in the
 * progress log, an entry in decisions.md), then escalated to the user, whose answers update the exit
 * criteria the saga carries on with (and SAGA.md shows).
 */
import type { ExitCriterion } from '../../domain/plan';
import type { SagaContext } from '../../domain/saga/saga-input';
import {
  applyUnachievableAnswers,
  unachievableDeviation,
  unachievableQuestion,
} from '../../domain/planning/unachievable';
import { activitiesFor } from '../activity-proxies';
import { askAll } from '../ask';
import { sagaLog } from '../shared';

export async function escalateUnachievable(
  ctx: SagaContext,
  round: number,
  criteria: ExitCriterion[],
  findings: Map<string, string>,
): Promise<ExitCriterion[]> {
  const unachievable = criteria.filter((c) => findings.has(c.id));
  for (const c of unachievable) await sagaLog(ctx, unachievableDeviation(c, findings.get(c.id)!));
  await activitiesFor(ctx).quick.prependDecision({
    sagaDir: ctx.sagaDir,
    entry: {
      at: new Date().toISOString(),
      title: `Unachievable validation (round ${round}): ${unachievable.map((c) => c.id).join(', ')} cannot be checked`,
      lines: unachievable.map((c) => `- ${c.id} ${c.text}: ${findings.get(c.id)!}; escalated to the user`),
    },
  });
  const answers = await askAll(
    ctx.sagaWorkflowId,
    unachievable.map((c) => unachievableQuestion(round, c, findings.get(c.id)!)),
  );
  const byId = new Map(unachievable.map((c, i) => [c.id, { ...answers[i]!, finding: findings.get(c.id)! }]));
  for (const [id, a] of byId)
    await sagaLog(
      ctx,
      `Deviation: exit criterion ${id}: ${a.user} chose ${a.choice}${a.text ? `: ${a.text}` : ''}`,
    );
  return applyUnachievableAnswers(criteria, byId);
}
