/**
 * Final validation (docs/PROCEDURE.md §5): every saga exit criterion runs on a fresh checkout of the integration branch; the completion
 * report says how each was validated. A criterion whose command cannot run is "not checkable", never passed.
 */
import { isNotRunnable } from '../../domain/fleet/unrunnable-checks';
import { patched, setCurrentDetails, setHandler } from '@temporalio/workflow';
import { integrationBranch, worktreePath } from '../../domain/contract/naming';
import type { ExitCriterion, PlanOutline } from '../../domain/plan';
import { unachievableFinding } from '../../domain/planning/unachievable';
import { interactionAnsweredSignal } from '../../domain/saga/messages';
import type { SagaContext } from '../../domain/saga/saga-input';
import { activitiesFor } from '../activity-proxies';
import { recordAnswer } from '../ask';
import { PATCHES } from '../patches';
import { escalateUnachievable } from './unachievable';

export interface CriterionResult {
  id: string;
  text: string;
  check: string;
  result: 'passed' | 'failed' | 'not-checkable' | 'by-hand';
  evidence: string;
}

export interface ValidationInput {
  ctx: SagaContext;
  plan: PlanOutline;
  round: number;
}

export interface ValidationResult {
  passed: boolean;
  criteria: CriterionResult[];
  head: string;
  /** The exit criteria as the user's answers left them, when a check could not run (absent otherwise). */
  exitCriteria?: ExitCriterion[];
}

export async function validationWorkflow(input: ValidationInput): Promise<ValidationResult> {
  // The phase's API: answers to its questions (a criterion that cannot be checked) come back here.
  setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer));
  const { ctx, plan } = input;
  const { quick, long } = activitiesFor(
    ctx,
    ctx.settings.checkTimeoutMs * Math.max(1, plan.exit_criteria.length),
  );
  const branch = integrationBranch(ctx.name);
  const worktree = worktreePath(ctx, 'validation');

  setCurrentDetails('Checking out the integration branch');
  const checkout = await long.prepareWorktree({
    repo: ctx.repo,
    branch,
    worktree,
    base: branch,
    copyFiles: ctx.settings.worktree.copy,
    setup: ctx.settings.worktree.setup,
    passEnv: ctx.settings.passEnv,
    sandbox: ctx.settings.sandbox,
  });
  setCurrentDetails('Running the saga exit criteria');
  const run = async (list: ExitCriterion[], label: string) => {
    if (!list.length) return []; // every criterion is verified by hand
    const checks = await long.runChecks({
      sagaDir: ctx.sagaDir,
      cwd: worktree,
      checks: list.map((c) => ({ text: c.text, check: c.check })),
      label,
      timeoutMs: ctx.settings.checkTimeoutMs,
      passEnv: ctx.settings.passEnv,
      sandbox: ctx.settings.sandbox,
    });
    return list.map((c, i) => criterionResult(c, checks.results[i]!));
  };
  let exitCriteria = plan.exit_criteria;
  const results = new Map(
    (
      await run(
        exitCriteria.filter((c) => !c.by_hand),
        `validation-r${input.round}`,
      )
    ).map((r) => [r.id, r]),
  );
  // A criterion that cannot be checked is noted in the spec and the log, then escalated.
  const findings = new Map(
    [...results.values()].flatMap((r) =>
      r.result === 'not-checkable' ? [[r.id, unachievableFinding(r.check, r.exitCode)] as const] : [],
    ),
  );
  if (findings.size) {
    exitCriteria = await escalateUnachievable(ctx, input.round, exitCriteria, findings);
    const replaced = exitCriteria.filter((c) => findings.has(c.id) && !c.by_hand);
    if (replaced.length)
      for (const r of await run(replaced, `validation-r${input.round}-replaced`)) results.set(r.id, r);
  }
  await quick.removeWorktree({ repo: ctx.repo, worktree });

  // Verified by hand: the user's confirmation at acceptance is its check (earlier runs: never passed).
  const byHand = exitCriteria.some((c) => c.by_hand) && patched(PATCHES.byHandVerified);
  const criteria: CriterionResult[] = exitCriteria.map((c) => {
    if (c.by_hand)
      return {
        id: c.id,
        text: c.text,
        check: c.check,
        result: byHand ? 'by-hand' : 'not-checkable',
        evidence: byHand ? 'to verify by hand at acceptance' : 'verified by hand',
      };
    const { exitCode: _exitCode, ...result } = results.get(c.id)!;
    return result;
  });
  const passed = criteria.every((c) => c.result === 'passed' || c.result === 'by-hand');
  // The saga logs the outcome from this result (a signal would cost its history four events).
  return { passed, criteria, head: checkout.head, ...(findings.size ? { exitCriteria } : {}) };
}

function criterionResult(
  c: ExitCriterion,
  r: { exitCode: number | null; timedOut: boolean; outputPath: string },
): CriterionResult & { exitCode: number | null } {
  const result =
    r.exitCode === 0 && !r.timedOut
      ? 'passed'
      : isNotRunnable(r.exitCode, r.timedOut)
        ? 'not-checkable'
        : 'failed';
  return { id: c.id, text: c.text, check: c.check, result, evidence: r.outputPath, exitCode: r.exitCode };
}
