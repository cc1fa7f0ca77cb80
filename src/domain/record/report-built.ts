/**
 * REPORT.md's account of what was built: per milestone, prose and bullets from the tasks' own reports (the
 * agent's summary where it wrote one) and what git says each task's merge changed; and what `saga continue`
 * found differing between the record and git. Pure.
 */
import type { MilestoneState, SagaStatus, TaskState } from '../contract/state';
import { reconciliationSummary } from './reconciliation';
import { bullets, code, oneLine, shortCommit } from './markdown';

/** What a diff changed: the files, and lines added and removed. */
export interface DiffStat {
  files: string[];
  insertions: number;
  deletions: number;
}

/** Read when the report is written (never through history): per task ref ("1.2"). */
export interface TaskBuilt {
  /** The agent's own summary of its work (its report's `summary`), when it wrote one. */
  summary?: string | null;
  /** What the task's merge into the integration branch changed; null when git has no merge of it. */
  diff?: DiffStat | null;
}

/** Files listed per task before "and N more". */
const FILES_SHOWN = 5;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

export const diffStatText = (d: DiffStat): string =>
  `${plural(d.files.length, 'file')} changed, +${d.insertions} −${d.deletions} lines`;

function filesText(files: string[]): string {
  const shown = files.slice(0, FILES_SHOWN).map(code).join(', ');
  return files.length > FILES_SHOWN ? `${shown} and ${files.length - FILES_SHOWN} more` : shown;
}

function taskBullet(t: TaskState, built: TaskBuilt | undefined): string {
  const head = `**${t.id} ${oneLine(t.title)}** (${t.status}${t.commit ? `, ${shortCommit(t.commit)}` : ''})`;
  const said = built?.summary ? ` The agent's summary: ${oneLine(built.summary)}` : '';
  if (built?.diff) {
    const d = built.diff;
    return `${head}: ${diffStatText(d)}${d.files.length ? ` (${filesText(d.files)})` : ''}.${said}`;
  }
  const files = t.changedFiles.length ? `changed ${filesText(t.changedFiles)}` : 'no files recorded';
  const landed = t.status === 'integrated' ? '; no merge of it is on the integration branch' : '';
  return `${head}: ${files}${landed}.${said}`;
}

/** The milestone's total: the union of its tasks' files, their lines summed. */
function milestoneTotal(tasks: TaskState[], built: Record<string, TaskBuilt>): DiffStat | null {
  const diffs = tasks.flatMap((t) => (built[t.id]?.diff ? [built[t.id]!.diff!] : []));
  if (!diffs.length) return null;
  return {
    files: [...new Set(diffs.flatMap((d) => d.files))],
    insertions: diffs.reduce((n, d) => n + d.insertions, 0),
    deletions: diffs.reduce((n, d) => n + d.deletions, 0),
  };
}

function milestoneBuilt(m: MilestoneState, built: Record<string, TaskBuilt>): string {
  const landed = m.tasks.filter((t) => t.status === 'integrated');
  const total = milestoneTotal(landed, built);
  const lead =
    `${plural(landed.length, 'task')} of ${m.tasks.length} landed on the integration branch` +
    (total ? `, together ${diffStatText(total)}` : '') +
    (m.integrationCommit ? ` (integration commit ${shortCommit(m.integrationCommit)})` : '') +
    '.';
  return [
    `### Milestone ${m.id}: ${oneLine(m.title)} — ${m.status}`,
    '',
    lead,
    '',
    bullets(
      m.tasks.map((t) => taskBullet(t, built[t.id])),
      'No tasks.',
    ),
  ].join('\n');
}

/** "What was built": one paragraph and a bullet per task for each milestone. */
export function whatWasBuilt(status: SagaStatus, built: Record<string, TaskBuilt> = {}): string {
  return status.milestones.map((m) => milestoneBuilt(m, built)).join('\n\n') || 'Nothing yet.';
}

/** The section body for what `saga continue` found; null when it never reconciled this saga. */
export function reconciliationReport(status: SagaStatus): string | null {
  if (!status.reconciliation) return null;
  const summary = reconciliationSummary(status.reconciliation);
  const lead = status.reconciliation.findings.length
    ? 'Read these before you accept: a task whose merge was lost and left is not in the integration branch.'
    : '';
  return [summary.heading, ...(lead ? ['', lead] : []), '', bullets(summary.findings.map(oneLine), '')]
    .join('\n')
    .trim();
}
