/**
 * Phase 3: every saga exit criterion runs on a fresh checkout of the integration branch; the completion
 * report says how each was validated. A criterion whose command cannot run is "not checkable", never passed.
 */
import { setCurrentDetails } from '@temporalio/workflow';
import { integrationBranch, worktreeDirName } from '../domain/naming';
import type { PlanOutline } from '../domain/plan';
import type { SagaContext } from '../domain/saga-input';
import { activitiesFor } from './activities';

export interface CriterionResult {
  id: string;
  text: string;
  check: string;
  result: 'passed' | 'failed' | 'not-checkable';
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
}

/** Shells answer 126/127 when the command itself cannot be found or run. */
const NOT_RUNNABLE = new Set([126, 127]);

export async function validationWorkflow(input: ValidationInput): Promise<ValidationResult> {
  const { ctx, plan } = input;
  const { quick, long } = activitiesFor(
    ctx,
    ctx.settings.checkTimeoutMs * Math.max(1, plan.exit_criteria.length),
  );
  const branch = integrationBranch(ctx.name);
  const worktree = `${ctx.worktreeRoot}/${worktreeDirName(ctx.name, 'validation')}`;

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
  const checks = await long.runChecks({
    sagaDir: ctx.sagaDir,
    cwd: worktree,
    checks: plan.exit_criteria.map((c) => ({ text: c.text, check: c.check })),
    label: `validation-r${input.round}`,
    timeoutMs: ctx.settings.checkTimeoutMs,
    passEnv: ctx.settings.passEnv,
    sandbox: ctx.settings.sandbox,
  });
  await quick.removeWorktree({ repo: ctx.repo, worktree });

  const criteria: CriterionResult[] = plan.exit_criteria.map((c, i) => {
    const r = checks.results[i]!;
    const result =
      r.exitCode === 0 && !r.timedOut
        ? 'passed'
        : r.exitCode !== null && NOT_RUNNABLE.has(r.exitCode)
          ? 'not-checkable'
          : 'failed';
    return { id: c.id, text: c.text, check: c.check, result, evidence: r.outputPath };
  });
  const passed = criteria.every((c) => c.result === 'passed');
  // The saga logs the outcome from this result (a signal would cost its history four events).
  return { passed, criteria, head: checkout.head };
}
