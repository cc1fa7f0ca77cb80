/**
 * Planning steps kept out of the planning workflow's loop: the planner's intake restatement (recorded, and
 * shown with the first question); the saga's exit criteria written by their own planner step (docs/PROCEDURE.md §2.5)
 * before the decomposition (§2.6), which must keep them; memory-versus-codebase conflicts in autonomous
 * decisions resolved newer-wins.
 */
import { plannerRestatement } from '../../domain/request/intake';
import { resolveSignalConflict } from '../../domain/planning/memory';
import { validatePlan, type ExitCriterion, type Plan } from '../../domain/plan';
import {
  PlannerCriteriaOutputSchema,
  withAgreedCriteria,
  zodErrors,
  type PlannerDecision,
} from '../../domain/planning/planner';
import type { SagaContext } from '../../domain/saga/saga-input';
import { patched } from '@temporalio/workflow';
import { activitiesFor } from '../activity-proxies';
import { PATCHES } from '../patches';
import type { Planner, Validation } from './planner-runs';
import { sagaLog } from '../shared';

export const validatePlanned = (raw: unknown): Validation<Plan> => {
  const result = validatePlan(raw, 'planner output');
  return result.ok ? { ok: true, value: result.plan } : { ok: false, errors: result.errors };
};

const validateCriteria = (raw: unknown): Validation<ExitCriterion[]> => {
  const parsed = PlannerCriteriaOutputSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data.exit_criteria }
    : { ok: false, errors: zodErrors(parsed.error) };
};

/** The planner's restatement in decisions.md and the log; its lines (null when it gave none). */
export async function recordRestatement(
  ctx: SagaContext,
  out: { problem: string; shape: string; unknowns: string[] },
): Promise<string[] | null> {
  const lines = plannerRestatement(out);
  if (!lines) return null;
  await activitiesFor(ctx).quick.prependDecision({
    sagaDir: ctx.sagaDir,
    entry: { at: new Date().toISOString(), title: 'Intake restatement by the planner', lines },
  });
  await sagaLog(ctx, `Intake restatement by the planner: ${lines.join(' ')}`);
  return lines;
}

const CRITERIA_FROM_PLAN =
  "The planner answered nothing at stage 'criteria' (a planner of the earlier protocol): the exit " +
  'criteria are taken from its plan, as before.';

/**
 * docs/PROCEDURE.md §2.5, then §2.6: the exit criteria from the planner's `criteria` stage, then the milestones and tasks
 * from its `plan` stage, told the criteria and held to them. Null when the user aborted or the budget stopped.
 */
export async function draftPlan(
  ctx: SagaContext,
  planner: Planner,
  context: Record<string, unknown>,
): Promise<Plan | null> {
  // A planner of the earlier protocol knows no `criteria` stage: it answers nothing, and plans as before.
  const fromPlan = patched(PATCHES.optionalCriteriaStage)
    ? { value: 'from-plan' as const, note: CRITERIA_FROM_PLAN }
    : undefined;
  const agreed = await planner<ExitCriterion[] | 'from-plan'>(
    'criteria',
    context,
    validateCriteria,
    fromPlan,
  );
  if (!agreed) return null;
  if (agreed === 'from-plan') return planner('plan', context, validatePlanned);
  await sagaLog(ctx, `Exit criteria written before decomposing: ${agreed.map((c) => c.id).join(', ')}`);
  return planner('plan', { ...context, exit_criteria: agreed }, (raw) =>
    validatePlanned(withAgreedCriteria(raw, agreed)),
  );
}

/**
 * Decisions where memory and codebase disagree: the newer signal wins and the citation names both (as in
 * "Memory said X, codebase said Y, chose X because newer"); it reaches decisions.md and the rationale block.
 */
export async function resolveConflicts(
  ctx: SagaContext,
  worktree: string,
  decisions: PlannerDecision[],
): Promise<PlannerDecision[]> {
  const resolved: PlannerDecision[] = [];
  for (const d of decisions) {
    if (!d.conflict) {
      resolved.push(d);
      continue;
    }
    const dates = await activitiesFor(ctx).quick.signalDates({
      repo: ctx.repo,
      worktree,
      memoryCitation: d.conflict.memory.citation,
      path: d.conflict.codebase.path,
    });
    const { choice, citation } = resolveSignalConflict(d.conflict, dates);
    await sagaLog(ctx, `Memory and codebase disagree on ${d.question}: ${citation}`);
    resolved.push({ ...d, choice, citation, confident: true });
  }
  return resolved;
}
