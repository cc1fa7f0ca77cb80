/**
 * What `saga continue` found when it compared the saga's record with reality (docs/PROCEDURE.md
 * §7.3): git (branches, worktrees, merges into the integration branch) and the validation evidence of finished
 * tasks. The saga keeps the latest finding so PROGRESS.md and `saga status` show it. Pure.
 */
import type { MilestoneState, TaskState } from '../contract/state';
import {
  MAX_FINDING_CHARS,
  MAX_FINDINGS,
  type Reconciliation,
  type ReconciliationFinding,
  type ReconciliationInput,
} from '../contract/reconciliation';

/** Tasks whose work the saga records as finished: their branch holds a handoff, their evidence was kept. */
const FINISHED: readonly TaskState['status'][] = ['passed', 'integrated'];

/** What git is asked about each task: its recorded handoff, and whether it must be in the integration branch. */
export function gitExpectations(milestones: MilestoneState[]) {
  return milestones.flatMap((m) =>
    m.tasks.map((t) => ({
      key: t.key,
      branch: t.branch,
      commit: t.commit,
      expectMerged: t.status === 'integrated',
    })),
  );
}

/** The evidence files of finished tasks, to spot-check that what the record cites is there. */
export const evidenceToCheck = (milestones: MilestoneState[]): { task: string; path: string }[] =>
  milestones.flatMap((m) =>
    m.tasks
      .filter((t) => FINISHED.includes(t.status))
      .flatMap((t) => t.evidence.map((path) => ({ task: t.id, path }))),
  );

/** A git finding keyed by task key ("m1t2") as a finding about task "1.2". */
export function taskFinding(
  milestones: MilestoneState[],
  finding: { key: string | null; text: string },
): ReconciliationFinding {
  const task = milestones.flatMap((m) => m.tasks).find((t) => t.key === finding.key);
  return { task: task?.id ?? null, text: finding.text.slice(0, MAX_FINDING_CHARS) };
}

/** What is sent to the saga: the findings (at most MAX_FINDINGS, the last one saying how many more). */
export function reconciliationInput(
  findings: ReconciliationFinding[],
  checked: ReconciliationInput['checked'],
): ReconciliationInput {
  if (findings.length <= MAX_FINDINGS) return { findings, checked };
  const shown = findings.slice(0, MAX_FINDINGS - 1);
  return {
    findings: [
      ...shown,
      { task: null, text: `…and ${findings.length - shown.length} more (see saga continue's output)` },
    ],
    checked,
  };
}

/** The saga's log lines for a reconciliation (PROGRESS.md's log and `saga status` show them). */
export function reconciliationLogLines(r: ReconciliationInput): string[] {
  if (!r.findings.length)
    return [
      `Reconciliation: git and the evidence agree with the record (${r.checked.tasks} task(s), ${r.checked.evidenceFiles} evidence file(s) checked)`,
    ];
  return r.findings.map((f) => `Reconciliation: ${f.task ? `task ${f.task}: ` : ''}${f.text}`);
}

/** The findings about one task ("1.2"). */
export const findingsFor = (r: Reconciliation | null | undefined, task: string): string[] =>
  (r?.findings ?? []).filter((f) => f.task === task).map((f) => f.text);

/** One paragraph per reconciliation for PROGRESS.md and `saga status`: when, what was checked, what differs. */
export function reconciliationSummary(r: Reconciliation): { heading: string; findings: string[] } {
  const checked = `${r.checked.tasks} task(s), ${r.checked.evidenceFiles} evidence file(s)`;
  return {
    heading: r.findings.length
      ? `saga continue at ${r.at} found ${r.findings.length} difference(s) between the record and reality (${checked} checked):`
      : `saga continue at ${r.at}: git and the evidence agree with the record (${checked} checked).`,
    findings: r.findings.map((f) => (f.task ? `Task ${f.task}: ${f.text}` : f.text)),
  };
}

/**
 * The acceptance prompt's lines for what `saga continue` found: the user accepting (and fast-forwarding)
 * the integration branch is told of every difference, a lost merge above all.
 */
export function reconciliationPromptLines(findings: string[]): string[] {
  if (!findings.length) return [];
  return [
    `saga continue found ${findings.length} difference(s) between the record and git (REPORT.md lists them; read them before you accept):`,
    ...findings.map((f) => `- ${f}`),
  ];
}
