/**
 * PROGRESS.md (docs/PROCEDURE.md §11.1): phase, current milestone, every worker's ids and task status with its evidence,
 * the pull requests (`delivery: pr`), open questions, integration notes, decisions and deviations, what `saga continue` found when it
 * reconciled the record with reality, and the whole log. Pure and deterministic, like render.ts.
 */
import { bullets, code, doc, oneLine, section, shortCommit } from './markdown';
import { pullRequestsSection } from './pull-requests';
import { findingsFor, reconciliationSummary } from './reconciliation';
import type { SagaStatus, TaskState, TaskStatus } from '../contract/state';

const STATUS_MARK: Record<TaskStatus, string> = {
  pending: '[ ]',
  running: '[~]',
  passed: '[x]',
  integrated: '[x]',
  blocked: '[!]',
  skipped: '[-]',
};

export interface ProgressExtra {
  integrationNotes: string[];
  decisions: string[];
  /** The whole log, newest first (progress-log.ts keeps it); absent: the workflow's recent `status.log`. */
  log?: string[];
}

function currentMilestone(status: SagaStatus): string {
  const current = status.milestones.find((m) => m.status !== 'integrated');
  if (!status.milestones.length) return 'none yet (planning)';
  if (!current) return 'all milestones integrated';
  return `${current.id} — ${oneLine(current.title)} (${current.status})`;
}

/**
 * The worker's ids, kept after its task ended (docs/PROCEDURE.md §3.9: each worker's run ids, task, branch and
 * worktree; continuing relies on them): its workflow and run, its agent and session, where it worked.
 */
function workerIds(t: TaskState): string[] {
  const ids: string[] = [];
  if (t.workflowId) ids.push(`workflow ${code(t.workflowId)}${t.runId ? ` run ${code(t.runId)}` : ''}`);
  if (t.agent)
    ids.push(
      `agent ${code(t.agent.profile)} session ${t.agent.sessionId ? code(t.agent.sessionId) : 'none reported'}`,
    );
  if (t.worktree)
    ids.push(`worktree ${code(t.worktree)}${t.status === 'running' ? '' : ' (removed after its handoff)'}`);
  return ids;
}

function taskProgressLine(t: TaskState, status: SagaStatus): string {
  const parts = [`${STATUS_MARK[t.status]} ${t.id} ${t.slug} — ${t.status}`];
  if (t.branch) parts.push(`branch ${code(t.branch)}`);
  if (t.commit) parts.push(`commit ${shortCommit(t.commit)}`);
  if (t.attempts) parts.push(`attempts ${t.attempts}`);
  if (t.evidence.length) parts.push(`evidence: ${t.evidence.join(', ')}`);
  parts.push(...workerIds(t));
  if (t.reason) parts.push(`reason: ${oneLine(t.reason)}`);
  // What git or the evidence says against this task's record, where the reader looks for the task.
  parts.push(...findingsFor(status.reconciliation, t.id).map((f) => `reconciliation: ${oneLine(f)}`));
  return `- ${parts.join(' · ')}`;
}

function reconciliationSection(status: SagaStatus): string {
  if (!status.reconciliation) return section('Reconciliation', 'Not reconciled yet (saga continue does it).');
  const summary = reconciliationSummary(status.reconciliation);
  return section('Reconciliation', [summary.heading, '', bullets(summary.findings, '')].join('\n'));
}

export function renderProgressMd(status: SagaStatus, extra: ProgressExtra): string {
  const tasks = status.milestones.length
    ? status.milestones
        .map((m) =>
          [
            `### Milestone ${m.id}: ${oneLine(m.title)} — ${m.status}`,
            '',
            ...m.tasks.map((t) => taskProgressLine(t, status)),
          ].join('\n'),
        )
        .join('\n\n')
    : 'No tasks yet.';
  const questions = status.pending.map((p) => {
    const options = p.options
      .map((o, i) => `[${i}] ${o}${p.recommended === i ? ' (recommended)' : ''}`)
      .join(', ');
    return `**${p.id}** (${p.kind}): ${oneLine(p.prompt)} — options: ${options}`;
  });
  return doc([
    `# Progress: ${status.name}`,
    [
      `- **Phase:** ${status.phase}`,
      `- **Round:** ${status.round}`,
      `- **Current milestone:** ${currentMilestone(status)}`,
      `- **Execution mode:** ${status.executionMode}`,
      `- **Integration branch:** ${code(status.integrationBranch)}`,
      `- **Workflow:** ${code(status.workflowId)}${status.runId ? ` run ${code(status.runId)}` : ''}`,
      `- **Web UI:** ${status.uiUrl || '—'}`,
    ].join('\n'),
    section('Tasks', tasks),
    pullRequestsSection(status.pullRequests),
    section('Open questions', bullets(questions)),
    section('Integration notes', bullets(extra.integrationNotes)),
    section('Decisions & Deviations', bullets(extra.decisions)),
    reconciliationSection(status),
    section('Log (newest first)', bullets(extra.log ?? status.log, 'Empty.')),
  ]);
}
