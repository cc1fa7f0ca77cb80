/**
 * Markdown projections of saga state (the saga directory contract; docs/PROCEDURE.md §2.7, §11): SAGA.md, MILESTONE.md, task specs and
 * decisions.md entries (PROGRESS.md is progress-md.ts, REPORT.md completion-report.ts, manifest.md
 * manifest.ts).
 * Pure and deterministic: the same state always renders the same bytes, so rewriting a file after every
 * change is idempotent. These files are read by people only; the saga never reads them back (Temporal
 * history is the truth).
 */
import type { Environment } from '../planning/environment';
import {
  bullets,
  cell,
  code,
  doc,
  fenced,
  oneLine,
  section,
  shellQuote,
  shortCommit,
  table,
} from './markdown';
import { milestoneDirName, sagaWorkflowId, taskFileName, taskRef } from '../contract/naming';
import type { Plan, PlanMilestone, PlanTask } from '../plan';
import { currentTaskSpec, describeSpecChange } from '../fleet/spec-changes';
import type { MilestoneState, SagaStatus, TaskState } from '../contract/state';

const checkLine = (c: { text: string; check: string }): string =>
  `${oneLine(c.text)} — check: ${code(c.check)}`;

export const milestoneSpecPath = (m: { id: number; slug: string }): string =>
  `milestones/${milestoneDirName(m.id, m.slug)}/MILESTONE.md`;
export const taskSpecPath = (m: { id: number; slug: string }, t: { id: number; slug: string }): string =>
  `milestones/${milestoneDirName(m.id, m.slug)}/tasks/${taskFileName(t.id, t.slug)}`;

export function findTaskState(
  status: SagaStatus | null,
  milestone: number,
  task: number,
): TaskState | undefined {
  return status?.milestones.find((m) => m.id === milestone)?.tasks.find((t) => t.task === task);
}

// ---- SAGA.md -----------------------------------------------------------------------------------------

export interface SagaMdInput {
  name: string;
  /** Null before the saga has published any state (the header then says "planning"). */
  status: SagaStatus | null;
  plan: Plan;
  environment: Environment | null;
  /** The announcement of active modes and any refusals (flags module), shown verbatim. */
  flagsAnnouncement: string;
  /** Questions the autonomous planner asked the user instead of deciding (rationale block). */
  askedBack?: string[];
  /** Whether `--autonomous` was on; defaults to `status.flags.autonomous`. */
  autonomous?: boolean;
  /** The plan's cost estimate from earlier sagas (domain/fleet/budget planEstimateText); absent when none. */
  costEstimate?: string | null;
}

const MAX_RATIONALE_BULLETS = 10;

/** Autonomous mode's "Recommendation Rationale" block; empty when the plan carries no rationale or tradeoffs. */
export function renderRationaleBlock(plan: Plan, autonomous: boolean, askedBack: string[] = []): string {
  const rationale = plan.rationale ?? [];
  if (!rationale.length && !plan.tradeoffs) return '';
  // At most 10 bullets in all: when there are more decisions, the last bullet points to decisions.md.
  const overflow = rationale.length > MAX_RATIONALE_BULLETS;
  const shown = rationale.slice(0, overflow ? MAX_RATIONALE_BULLETS - 1 : MAX_RATIONALE_BULLETS);
  const lines = [
    '## Recommendation Rationale',
    '',
    autonomous ? 'This artifact was produced with `--autonomous`. Key decisions:' : 'Key decisions:',
    '',
    ...shown.map((r) => `- ${oneLine(r)}`),
  ];
  if (overflow) {
    lines.push(`- …and ${rationale.length - shown.length} more in decisions.md`);
  }
  if (plan.tradeoffs) {
    lines.push(
      '',
      '**Tradeoffs accepted:**',
      `- Short-term: ${oneLine(plan.tradeoffs.short_term)}`,
      `- Long-term: ${oneLine(plan.tradeoffs.long_term)}`,
      `- Why this is the right balance: ${oneLine(plan.tradeoffs.balance)}`,
    );
  }
  lines.push(
    '',
    `**Decisions asked back to user:** ${askedBack.length ? askedBack.map(oneLine).join('; ') : 'None'}`,
  );
  return lines.join('\n');
}

export function renderEnvironmentSection(environment: Environment | null): string {
  if (!environment) return section('Environment', 'Not discovered yet.');
  const commands = environment.commands.map((c) => [
    c.purpose,
    code(c.argv.map(shellQuote).join(' ')),
    cell(c.source),
    cell(
      `${c.confirmed}${c.exitCode === null ? '' : ` (exit ${c.exitCode})`}` +
        `${c.outputPath ? ` — output: ${c.outputPath}` : ''}`,
    ),
  ]);
  const body = [
    `- **Program type:** ${environment.programType} — ${oneLine(environment.programTypeReason)}`,
    `- **Languages:** ${environment.languages.join(', ') || 'unknown'}`,
    `- **Computer use:** ${environment.computerUse}`,
    `- **Launch for manual verification:** ${environment.launch ? code(environment.launch) : 'not found'}`,
    '',
    '### Commands',
    '',
    commands.length ? table(['Purpose', 'Command', 'Source', 'Confirmed'], commands) : 'None found.',
    '',
    '### Notes',
    '',
    bullets(environment.notes),
  ];
  return section('Environment', body.join('\n'));
}

function milestoneStatus(status: SagaStatus | null, id: number): MilestoneState['status'] {
  return status?.milestones.find((m) => m.id === id)?.status ?? 'pending';
}

export function renderSagaMd(input: SagaMdInput): string {
  const { name, status, plan, environment } = input;
  const index = plan.milestones.map((m) => [
    String(m.id),
    cell(m.title),
    m.depends_on.length ? m.depends_on.map((d) => `M${d}`).join(', ') : '—',
    m.tasks.map((t) => taskRef(m.id, t.id)).join(', '),
    milestoneStatus(status, m.id),
    `[${milestoneSpecPath(m)}](${milestoneSpecPath(m)})`,
  ]);
  const exits = plan.exit_criteria.map((c) => [
    cell(c.id),
    cell(c.finding ? `${c.text} — finding: ${c.finding}` : c.text),
    c.by_hand ? `${code(c.check)} (verified by hand)` : code(c.check),
  ]);
  const header = status
    ? [
        `- **Goal:** ${oneLine(status.goal) || '—'}`,
        `- **Phase:** ${status.phase}${status.round > 1 ? ` (round ${status.round})` : ''}`,
        ...(status.error ? [`- **Error:** ${oneLine(status.error)}`] : []),
        `- **Repo:** ${code(status.repo)}`,
        ...(status.configFile ? [`- **Config file:** ${code(status.configFile)}`] : []),
        `- **Execution mode:** ${status.executionMode}`,
        `- **Integration branch:** ${code(status.integrationBranch)}`,
        `- **Web UI:** ${status.uiUrl || '—'}`,
      ]
    : ['- **Phase:** planning'];
  if (input.costEstimate) header.push(`- ${oneLine(input.costEstimate)}`);
  return doc([
    `# Saga: ${name}`,
    `> Projection of workflow ${code(status?.workflowId ?? sagaWorkflowId(name))}; Temporal history is the ` +
      'source of truth and edits here are not read back. Live state: [PROGRESS.md](PROGRESS.md).',
    header.join('\n'),
    renderRationaleBlock(plan, input.autonomous ?? status?.flags.autonomous ?? false, input.askedBack),
    section('Problem statement', plan.problem),
    section(
      'Scope and non-goals',
      [
        '### In scope',
        '',
        bullets(plan.scope.in),
        '',
        '### Out of scope (non-goals)',
        '',
        bullets(plan.scope.out),
        '',
        '### Delegated',
        '',
        bullets(plan.scope.delegated),
      ].join('\n'),
    ),
    section('Flags', input.flagsAnnouncement.trim() ? fenced(input.flagsAnnouncement) : 'No modes active.'),
    renderEnvironmentSection(environment),
    section('Exit criteria', table(['ID', 'Criterion', 'Check'], exits)),
    section('Milestone index', table(['#', 'Milestone', 'Depends on', 'Tasks', 'Status', 'Spec'], index)),
  ]);
}

// ---- MILESTONE.md and task specs -----------------------------------------------------------------------

/**
 * `rationale`: autonomous mode's rationale block (renderRationaleBlock), which every artifact made under --autonomous
 * carries after its header, as SAGA.md does.
 */
export function renderMilestoneMd(
  milestone: PlanMilestone,
  state: MilestoneState | null | undefined,
  rationale = '',
): string {
  const rows = milestone.tasks.map((t) => {
    const file = `tasks/${taskFileName(t.id, t.slug)}`;
    return [
      taskRef(milestone.id, t.id),
      cell(t.title),
      t.depends_on.join(', ') || '—',
      t.owns.map(code).join(', ') || '—',
      state?.tasks.find((s) => s.task === t.id)?.status ?? 'pending',
      `[${file}](${file})`,
    ];
  });
  return doc([
    `# Milestone ${milestone.id}: ${oneLine(milestone.title)}`,
    [
      `- **Status:** ${state?.status ?? 'pending'}`,
      `- **Depends on:** ${milestone.depends_on.length ? milestone.depends_on.map((d) => `M${d}`).join(', ') : 'none'}`,
      `- **Integration commit:** ${shortCommit(state?.integrationCommit ?? null)}`,
      '- **Saga:** [SAGA.md](../../SAGA.md)',
    ].join('\n'),
    rationale,
    section('Goal', milestone.goal),
    section('Validation', bullets(milestone.validation.map(checkLine), 'No milestone-level checks listed.')),
    section('Tasks', table(['Task', 'Title', 'Depends on', 'Owns', 'Status', 'Spec'], rows)),
  ]);
}

export function renderTaskMd(
  milestoneId: number,
  task: PlanTask,
  state: TaskState | null | undefined,
  rationale = '',
): string {
  // The spec as it stands: adjustments after planning change its fields (and are listed below).
  const current = currentTaskSpec(task, state?.specChanges);
  const statusLines = [
    `- **Task:** ${taskRef(milestoneId, task.id)} (milestone ${milestoneId}, [MILESTONE.md](../MILESTONE.md))`,
    `- **Status:** ${state?.status ?? 'pending'}`,
    `- **Branch:** ${state?.branch ? code(state.branch) : 'not created yet'}`,
    `- **Commit:** ${shortCommit(state?.commit ?? null)}`,
    `- **Attempts:** ${state?.attempts ?? 0}`,
  ];
  if (task.agent) statusLines.push(`- **Agent profile:** ${task.agent}`);
  if (state?.reason) statusLines.push(`- **Reason:** ${oneLine(state.reason)}`);
  if (state?.error && state.error !== state.reason) statusLines.push(`- **Error:** ${oneLine(state.error)}`);
  if (state?.changedFiles.length)
    statusLines.push(`- **Changed files:** ${state.changedFiles.map(code).join(', ')}`);
  return doc([
    `# Task ${taskRef(milestoneId, task.id)}: ${oneLine(task.title)}`,
    statusLines.join('\n'),
    rationale,
    section('Scope', current.scope),
    section('Owned files', bullets(task.owns.map(code))),
    section('Interfaces', current.interfaces || 'None declared.'),
    section('Dependencies', bullets(task.depends_on.map((d) => `Task ${d}`))),
    section('Validation method', current.validation_method),
    section('Validation criteria', bullets(current.validation.map(checkLine))),
    section('Evidence required', current.evidence),
    ...(state?.specChanges?.length
      ? [section('Spec changes since approval', bullets(state.specChanges.map(describeSpecChange)))]
      : []),
    section('Evidence collected', bullets(state?.evidence ?? [], 'None yet.')),
  ]);
}

export { renderProgressMd, type ProgressExtra } from './progress-md';

// ---- decisions.md ------------------------------------------------------------------------------------------

export const DECISIONS_HEADER = '# Decisions\n\nNewest first. Each entry: when, what was decided, and why.\n';

/** Autonomous mode's format: `### YYYY-MM-DD HH:MM — title` (UTC) followed by the entry's lines. */
export function renderDecisionEntry(entry: { at: string; title: string; lines: string[] }): string {
  const at = new Date(entry.at);
  if (Number.isNaN(at.getTime()))
    throw new Error(`decision entry: 'at' must be an ISO timestamp, got "${entry.at}"`);
  const stamp = at.toISOString().slice(0, 16).replace('T', ' ');
  return (
    [`### ${stamp} — ${oneLine(entry.title)}`, ...entry.lines.map((l) => l.replace(/\r?\n/g, '\n  '))].join(
      '\n',
    ) + '\n'
  );
}
