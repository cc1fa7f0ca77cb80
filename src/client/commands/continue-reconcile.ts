/**
 * `saga continue`, docs/PROCEDURE.md §7.3: the record is checked against reality (task branches,
 * worktrees and merges into the integration branch; the validation evidence finished tasks cite), and what
 * differs goes to the saga itself, so PROGRESS.md and `saga status` show it, not only this command's output.
 */
import type { Client } from '@temporalio/client';
import { createArtifactActivities } from '../../activities/artifacts';
import { evidenceProblem } from '../../activities/artifacts/evidence';
import { reconcileGit } from '../../activities/git-ops';
import { sagaWorkflowId } from '../../domain/contract/naming';
import {
  evidenceToCheck,
  gitExpectations,
  reconciliationInput,
  reconciliationSummary,
  taskFinding,
} from '../../domain/record/reconciliation';
import type { ReconciliationFinding, ReconciliationInput } from '../../domain/contract/reconciliation';
import type { SagaStatus } from '../../domain/contract/state';
import { reconcileUpdate } from '../../domain/saga/messages';
import { defaultSagaHome } from '../../worker/worker';
import { getStatus } from '../saga-client';
import type { Io } from '../io';
import { stripControls } from '../../domain/text/terminal';

/** Evidence of finished tasks that is missing, empty or outside the saga directory. */
export async function evidenceFindings(
  status: Pick<SagaStatus, 'sagaDir' | 'milestones'>,
): Promise<{ checked: number; findings: ReconciliationFinding[] }> {
  const cited = evidenceToCheck(status.milestones);
  const problems = await Promise.all(cited.map((e) => evidenceProblem(status.sagaDir, e.path)));
  return {
    checked: cited.length,
    findings: cited.flatMap((e, i) => (problems[i] ? [{ task: e.task, text: problems[i]! }] : [])),
  };
}

export async function reconcileSaga(client: Client, status: SagaStatus, io: Io): Promise<void> {
  const git = await reconcileGit({
    repo: status.repo,
    sagaName: status.name,
    tasks: gitExpectations(status.milestones),
    integrationBranch: status.integrationBranch,
  });
  const evidence = await evidenceFindings(status);
  const found = reconciliationInput(
    [...git.findings.map((f) => taskFinding(status.milestones, f)), ...evidence.findings],
    { tasks: git.tasks.length, evidenceFiles: evidence.checked },
  );
  const summary = reconciliationSummary({ ...found, at: new Date().toISOString() });
  // Findings name files and branches agents made: no control character of theirs reaches the terminal.
  io.out(
    stripControls(
      [`Reconciliation: ${summary.heading}`, ...summary.findings.map((f) => `  - ${f}`)].join('\n'),
    ),
  );
  await recordReconciliation(client, status, found, io);
}

/** What was found, sent to the running saga (its state, log, PROGRESS.md, acceptance prompt, REPORT.md). */
export async function recordReconciliation(
  client: Client,
  status: Pick<SagaStatus, 'name' | 'sagaDir'>,
  found: ReconciliationInput,
  io: Io,
): Promise<void> {
  const sagaHome = defaultSagaHome();
  try {
    await client.workflow
      .getHandle(sagaWorkflowId(status.name))
      .executeUpdate(reconcileUpdate, { args: [found] });
  } catch (error) {
    // A run of code from before the `reconcile` update: what was found is printed above, not recorded.
    io.out(`The saga did not record what reconciliation found: ${(error as Error).message}`);
    return;
  }
  // The saga's projector rewrites PROGRESS.md within a second; written here too, so it is current on return.
  await createArtifactActivities({ sagaHome }).writeProgress({
    sagaDir: status.sagaDir,
    status: await getStatus(client, status.name),
  });
  io.out(`Rewrote ${status.sagaDir}/PROGRESS.md from the workflow's state, with what reconciliation found.`);
}
