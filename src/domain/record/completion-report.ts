/**
 * REPORT.md, the completion report (the saga directory contract; the Saga procedure): what was built, the exit criteria with their
 * evidence, how to verify by hand, and what is left open. Pure and deterministic, like render.ts.
 */
import { z } from 'zod';
import type { Environment } from '../planning/environment';
import { bullets, cell, code, doc, fenced, oneLine, section, shellQuote, table } from './markdown';
import type { Plan } from '../plan';
import type { AutoRunFile } from './auto-run-files';
import { reconciliationReport, whatWasBuilt, type TaskBuilt } from './report-built';
import { ExitResultSchema, type SagaStatus } from '../saga/state';

export const ExitCriterionResultSchema = ExitResultSchema.extend({
  summary: z.string().optional(),
  /** The end of that output, read from `evidence` when the report is written (never through history). */
  output: z.string().optional(),
});
export type ExitCriterionResult = z.infer<typeof ExitCriterionResultSchema>;

export interface ReportInput {
  status: SagaStatus;
  plan: Plan;
  exitResults: ExitCriterionResult[];
  environment?: Environment | null;
  /** How the saga prepares a checkout (`worktree.copy` files, `worktree.setup` commands): the steps repeat it. */
  checkout?: { copy: string[]; setup: string[][] };
  /** Where the steps put the checkout to verify in (beside the saga's own worktrees). */
  verifyPath?: string;
  /** Extra, feature-specific steps; the checkout, checks and launch steps are always listed first. */
  manualSteps?: string[];
  /** Files the work adds or changes that tools run on their own (direnv, editors, git, CI, npm install). */
  autoRunFiles?: AutoRunFile[];
  /** Per task ref: the agent's summary and what its merge changed (read when the report is written). */
  built?: Record<string, TaskBuilt>;
}

/** Lines of check output the report quotes per criterion. */
const EXCERPT_LINES = 15;

/** The output's last lines, without the `$ command` header the saga writes first (the command is not output). */
export function outputExcerpt(output: string, check: string): string {
  const lines = output.replace(/\s+$/, '').split('\n');
  if (lines[0] === `$ ${check}`) lines.shift();
  const kept = lines.slice(-EXCERPT_LINES);
  const cut =
    lines.length > kept.length
      ? [`… (${lines.length - kept.length} earlier line(s) in the evidence file)`]
      : [];
  return [...cut, ...kept].join('\n').trim();
}

/** One line per criterion for the table: the given summary, else the output's last non-empty line. */
function summaryOf(result: ExitCriterionResult | undefined, check: string): string {
  if (result?.summary) return result.summary;
  const last = outputExcerpt(result?.output ?? '', check)
    .split('\n')
    .filter((l) => l.trim())
    .pop();
  return last ? `last output: ${last.trim()}` : '';
}

/**
 * Steps a person can follow as written: a separate checkout of the integrated result (their own stays as it
 * is), prepared the way the saga prepares its checkouts, each exit criterion's check with what the saga saw,
 * the program launched, and the checkout removed again.
 */
function manualVerificationSteps(input: ReportInput): string[] {
  const { status, plan, environment, exitResults } = input;
  const repo = shellQuote(status.repo);
  const where = shellQuote(input.verifyPath ?? `${status.repo}-verify`);
  const steps = [
    `Check out the integrated result beside your repo (your own checkout is not touched): ${code(`git -C ${repo} worktree add ${where} ${shellQuote(status.integrationBranch)}`)}, then ${code(`cd ${where}`)}`,
    ...(input.checkout?.copy ?? []).map(
      (file) =>
        `Copy ${code(file)} from your repo, as the saga's checkouts get it: ${code(`cp -R ${shellQuote(`${status.repo}/${file}`)} ${shellQuote(file)}`)}`,
    ),
    ...(input.checkout?.setup ?? []).map(
      (argv) => `Set the checkout up: ${code(argv.map(shellQuote).join(' '))}`,
    ),
    ...plan.exit_criteria.map((c) => {
      const result = exitResults.find((r) => r.id === c.id);
      const saw = result
        ? ` The saga's run: ${result.result}${summaryOf(result, c.check) ? `, ${summaryOf(result, c.check)}` : ''}.`
        : '';
      return `${c.id} — ${oneLine(c.text)}: run ${code(c.check)} and expect exit code 0.${saw}`;
    }),
  ];
  if (environment?.launch)
    steps.push(
      `Launch the program with ${code(environment.launch)} and try the feature: ${oneLine(status.goal)}`,
    );
  steps.push(...(input.manualSteps ?? []).map(oneLine));
  steps.push(`Remove the checkout when done: ${code(`git -C ${repo} worktree remove ${where}`)}`);
  return steps;
}

/** Seed: "Summarize evidence against each criterion": what ran, where, its result and its output's end. */
function criterionEvidence(
  criterion: Plan['exit_criteria'][number],
  result: ExitCriterionResult | undefined,
  integration: string,
): string {
  const lines = [
    `### ${criterion.id}: ${oneLine(criterion.text)} — ${result?.result ?? 'not run'}`,
    '',
    `- **Check:** ${code(criterion.check)}, run in a fresh checkout of ${code(integration)} (exit code 0 means met)`,
    `- **Evidence:** ${result?.evidence ? `[${result.evidence}](${result.evidence})` : 'none kept'}`,
  ];
  // No output: the evidence file could not be read when the report was written; its link is the record.
  if (result?.output !== undefined) {
    const excerpt = outputExcerpt(result.output, criterion.check);
    lines.push('', excerpt ? `Output (its end):\n\n${fenced(excerpt)}` : 'The check printed nothing.');
  }
  return lines.join('\n');
}

export function renderReportMd(input: ReportInput): string {
  const { status, plan, exitResults } = input;
  const results = plan.exit_criteria.map((c) => ({
    criterion: c,
    result: exitResults.find((r) => r.id === c.id),
  }));
  const passed = results.filter((r) => r.result?.result === 'passed').length;
  const reconciled = reconciliationReport(status);
  const exitRows = results.map(({ criterion, result }) => [
    cell(criterion.id),
    cell(criterion.text),
    code(criterion.check),
    result ? `**${result.result}**` : 'not run',
    result?.evidence ? `[${result.evidence}](${result.evidence})` : '—',
    cell(summaryOf(result, criterion.check)),
  ]);
  const evidence = results.map(({ criterion, result }) =>
    criterionEvidence(criterion, result, status.integrationBranch),
  );
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
    section('What was built', whatWasBuilt(status, input.built)),
    ...(reconciled ? [section('Reconciliation (saga continue)', reconciled)] : []),
    section(
      'Exit criteria',
      [table(['ID', 'Criterion', 'Check', 'Result', 'Evidence', 'Summary'], exitRows), ...evidence].join(
        '\n\n',
      ),
    ),
    section(
      'Manual verification',
      manualVerificationSteps(input)
        .map((s, i) => `${i + 1}. ${s}`)
        .join('\n'),
    ),
    ...(input.autoRunFiles?.length ? [autoRunSection(input.autoRunFiles)] : []),
    section('Open issues', bullets(open)),
  ]);
}

/** Listed before the user accepts: none of these is run by the saga, each is run by a tool on its own later. */
function autoRunSection(files: AutoRunFile[]): string {
  return section(
    'Review first: files that run on their own',
    [
      'The work adds or changes these files, which tools run without being asked (on entering the folder, ' +
        'opening it in an editor, a git command, an install, CI). Agents wrote them: read each before you ' +
        'accept and check the work out.',
      '',
      bullets(files.map((f) => `${code(f.path)}: ${f.runBy}`)),
    ].join('\n'),
  );
}
