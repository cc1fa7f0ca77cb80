/**
 * The saga's acceptance step: REPORT.md written (and what the prompt names from it), the acceptance round
 * asked, and the criteria left to verify by hand confirmed by the user who accepted.
 */
import { patched, workflowInfo } from '@temporalio/workflow';
import { planOutline } from '../../domain/plan';
import { verifiedByUser } from '../../domain/planning/unachievable';
import type { AutoRunFile } from '../../domain/record/auto-run-files';
import { reconciliationSummary } from '../../domain/record/reconciliation';
import { unresolvedTasks } from '../../domain/saga/phase-progress';
import { acceptRound, type AcceptanceInput, type AcceptanceResult } from './acceptance';
import { PATCHES } from '../patches';
import type { SagaRun } from './saga-run';
import type { ValidationResult } from './validation';
import type { ExitResult } from '../../domain/contract/state';

export const exitResultsOf = (validation: ValidationResult): ExitResult[] =>
  validation.criteria.map((c) => ({ id: c.id, result: c.result, evidence: c.evidence }));

/** What writing REPORT.md found for the acceptance prompt (results of older workers have neither list). */
export interface Reported {
  autoRunFiles: AutoRunFile[];
  autonomousChanges: string[];
  byHandChecks: string[];
}

/** The completion report; it needs the whole saga's status, which the activity reads through the queries. */
export async function writeReport(run: SagaRun, validation: ValidationResult): Promise<Reported> {
  const report = await run.quick.writeSagaReport({
    sagaDir: run.input.sagaDir,
    workflowId: run.self,
    runId: workflowInfo().runId,
    exitResults: exitResultsOf(validation),
  });
  run.reportPath = report.path;
  // Absent from the result an older worker recorded: its acceptance prompt named none.
  return {
    autoRunFiles: report.autoRunFiles ?? [],
    autonomousChanges: report.autonomousChanges ?? [],
    byHandChecks: report.byHandChecks ?? [],
  };
}

/** Acceptance only asks the user: the saga asks itself (no child, no signals either way). */
export async function accept(
  run: SagaRun,
  validation: ValidationResult,
  { autoRunFiles, autonomousChanges, byHandChecks }: Reported,
  delivery?: AcceptanceInput['delivery'],
): Promise<AcceptanceResult> {
  const { ctx, plan, decisions } = run.saga!;
  run.setPhase('acceptance');
  return acceptRound(
    {
      ctx,
      plan: planOutline(plan),
      round: run.round,
      validation,
      reportPath: run.reportPath!,
      unresolved: unresolvedTasks(run.progress.milestones),
      ...(decisions ? { decisions } : {}),
      ...(autoRunFiles.length ? { autoRunFiles } : {}),
      ...(run.reconciliation?.findings.length
        ? { reconciliation: reconciliationSummary(run.reconciliation).findings }
        : {}),
      ...(autonomousChanges.length ? { autonomousChanges } : {}),
      ...(byHandChecks.length ? { byHandChecks } : {}),
      ...(delivery ? { delivery } : {}),
    },
    { ask: (request) => run.ask(request), askAll: (requests) => run.askAll(requests) },
  );
}

/** Criteria to verify by hand count as verified by the user who accepted; REPORT.md says so. */
export async function confirmByHand(run: SagaRun, user: string): Promise<void> {
  const byHand = (run.exitResults ?? []).filter((r) => r.result === 'by-hand');
  if (!byHand.length || !patched(PATCHES.byHandVerified)) return;
  run.exitResults = verifiedByUser(run.exitResults!, user);
  run.addLog(`Verified by hand by ${user} at acceptance: ${byHand.map((r) => r.id).join(', ')}`);
  await run.quick.writeSagaReport({
    sagaDir: run.input.sagaDir,
    workflowId: run.self,
    runId: workflowInfo().runId,
    exitResults: run.exitResults,
  });
}
