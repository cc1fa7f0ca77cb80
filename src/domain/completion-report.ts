/**
 * REPORT.md, the completion report (DESIGN.md 4.5, Saga seed): what was built, the exit criteria with their
 * evidence, how to verify by hand, and what is left open. Pure and deterministic, like render.ts.
 */
import { z } from 'zod';
import type { Environment } from './environment';
import { bullets, cell, code, doc, oneLine, section, shellQuote, shortCommit, table } from './markdown';
import type { Plan } from './plan';
import type { SagaStatus } from './state';

export const ExitCriterionResultSchema = z.object({
  id: z.string(),
  result: z.enum(['passed', 'failed', 'not-checkable']),
  /** Path (relative to the saga directory) of the kept check output. */
  evidence: z.string().nullable(),
  summary: z.string().optional(),
});
export type ExitCriterionResult = z.infer<typeof ExitCriterionResultSchema>;

export interface ReportInput {
  status: SagaStatus;
  plan: Plan;
  exitResults: ExitCriterionResult[];
  environment?: Environment | null;
  /** Extra, feature-specific steps; the checkout, checks and launch steps are always listed first. */
  manualSteps?: string[];
}

function manualVerificationSteps(input: ReportInput): string[] {
  const { status, plan, environment } = input;
  const steps = [
    `Check out the integrated result: ${code(`git -C ${shellQuote(status.repo)} switch ${shellQuote(status.integrationBranch)}`)}`,
    ...plan.exit_criteria.map(
      (c) => `${oneLine(c.text)} (${c.id}): run ${code(c.check)} in the repo root and expect exit code 0.`,
    ),
  ];
  if (environment?.launch)
    steps.push(`Launch the program with ${code(environment.launch)} and try the feature by hand.`);
  return [...steps, ...(input.manualSteps ?? []).map(oneLine)];
}

export function renderReportMd(input: ReportInput): string {
  const { status, plan, exitResults } = input;
  const results = plan.exit_criteria.map((c) => ({
    criterion: c,
    result: exitResults.find((r) => r.id === c.id),
  }));
  const passed = results.filter((r) => r.result?.result === 'passed').length;
  const built = status.milestones.map((m) => {
    const rows = m.tasks.map((t) => [
      t.id,
      cell(t.title),
      t.status,
      t.branch ? code(t.branch) : '—',
      shortCommit(t.commit),
      cell(
        t.changedFiles.length
          ? `${t.changedFiles.slice(0, 5).join(', ')}${t.changedFiles.length > 5 ? ` (+${t.changedFiles.length - 5} more)` : ''}`
          : '—',
      ),
    ]);
    return [
      `### Milestone ${m.id}: ${oneLine(m.title)} — ${m.status}`,
      '',
      `Integration commit: ${shortCommit(m.integrationCommit)}`,
      '',
      table(['Task', 'Title', 'Status', 'Branch', 'Commit', 'Changed files'], rows),
    ].join('\n');
  });
  const exitRows = results.map(({ criterion, result }) => [
    cell(criterion.id),
    cell(criterion.text),
    code(criterion.check),
    result ? `**${result.result}**` : 'not run',
    result?.evidence ? `[${result.evidence}](${result.evidence})` : '—',
    cell(result?.summary ?? ''),
  ]);
  const open = status.milestones
    .flatMap((m) => m.tasks)
    .filter((t) => t.status === 'blocked' || t.status === 'skipped')
    .map((t) => `${t.id} ${t.slug} — ${t.status}${t.reason ? `: ${oneLine(t.reason)}` : ''}`);
  return doc([
    `# Completion report: ${status.name}`,
    [
      `- **Goal:** ${oneLine(status.goal) || '—'}`,
      `- **Round:** ${status.round}`,
      `- **Integration branch:** ${code(status.integrationBranch)}`,
      `- **Exit criteria passed:** ${passed} of ${plan.exit_criteria.length}`,
    ].join('\n'),
    section('What was built', built.join('\n\n') || 'Nothing yet.'),
    section('Exit criteria', table(['ID', 'Criterion', 'Check', 'Result', 'Evidence', 'Summary'], exitRows)),
    section(
      'Manual verification',
      manualVerificationSteps(input)
        .map((s, i) => `${i + 1}. ${s}`)
        .join('\n'),
    ),
    section('Open issues', bullets(open)),
  ]);
}
