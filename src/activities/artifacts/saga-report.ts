/**
 * REPORT.md, written at acceptance from the saga's own queries (as the projector writes PROGRESS.md), with what
 * the acceptance prompt names from it: the files that run on their own, the spec changes --autonomous made,
 * the task checks left to verify by hand.
 */
import { Context } from '@temporalio/activity';
import { autonomousSpecChanges } from '../../domain/fleet/adjustment-approval';
import { byHandTaskCheckLines } from '../../domain/fleet/unrunnable-checks';
import type { AutoRunFile } from '../../domain/record/auto-run-files';
import type { ExitCriterionResult } from '../../domain/record/completion-report';
import { worktreePath } from '../../domain/contract/naming';
import { queryLiveStatus } from '../../status/live-status';
import { carryQuery } from '../../domain/saga/messages';
import type { createArtifactActivities } from './';
import { readEvidenceTail } from './evidence';
import { landedAutoRunFiles } from '../git-ops/landed-files';
import { builtForReport } from './report-built';

type Artifacts = ReturnType<typeof createArtifactActivities>;

/**
 * REPORT.md from the saga's status and approved plan, read through its queries (both grow with the plan:
 * as an activity input they would enter the saga's history at every round).
 */
export async function writeSagaReport(
  artifacts: Artifacts,
  input: { sagaDir: string; workflowId: string; runId: string; exitResults: ExitCriterionResult[] },
): Promise<{
  path: string;
  autoRunFiles: AutoRunFile[];
  autonomousChanges: string[];
  byHandChecks: string[];
}> {
  const client = Context.current().client;
  const handle = client.workflow.getHandle(input.workflowId, input.runId);
  const status = await queryLiveStatus(client, input.workflowId, input.runId);
  const carry = await handle.query(carryQuery);
  if (!carry) throw new Error(`saga ${status.name} has no approved plan to report on`);
  // Each criterion's evidence is summarised from its kept output, read here (it never enters history).
  const exitResults = await Promise.all(
    input.exitResults.map(async (r) => {
      const output = r.evidence ? await readEvidenceTail(input.sagaDir, r.evidence) : null;
      return output === null ? r : { ...r, output };
    }),
  );
  const { ctx } = carry;
  const autoRunFiles = await landedAutoRunFiles(ctx.repo, ctx.base, status.integrationBranch).catch(
    (error: unknown) => [
      {
        path: '(the changed files could not be listed)',
        runBy: error instanceof Error ? error.message : String(error),
      },
    ],
  );
  const { path } = await artifacts.writeReport({
    sagaDir: input.sagaDir,
    status,
    plan: carry.plan,
    environment: carry.environment,
    exitResults,
    checkout: { copy: ctx.settings.worktree.copy, setup: ctx.settings.worktree.setup },
    verifyPath: worktreePath(ctx, 'verify'),
    autoRunFiles,
    built: await builtForReport({
      repo: ctx.repo,
      base: ctx.base,
      integrationBranch: status.integrationBranch,
      sagaDir: input.sagaDir,
      milestones: status.milestones,
    }),
  });
  // The acceptance prompt names them too (a result without them, from an older worker, names none).
  return {
    path,
    autoRunFiles,
    autonomousChanges: autonomousSpecChanges(status.milestones),
    byHandChecks: byHandTaskCheckLines(status.milestones),
  };
}
