/**
 * REPORT.md, the completion report (the saga directory contract; docs/PROCEDURE.md §5.3): what was built, the exit criteria with their
 * evidence, how to verify by hand, and what is left open. Pure and deterministic, like render.ts.
 */
import { pullRequestsSection } from './pull-requests';
import { z } from 'zod';
import type { Environment } from '../planning/environment';
import { bullets, cell, code, doc, fenced, oneLine, section, shellQuote, table } from './markdown';
import type { Plan } from '../plan';
import type { AutoRunFile } from './auto-run-files';
import { reconciliationReport, whatWasBuilt, type TaskBuilt } from './report-built';
import { checkResultLine } from './check-summary';
import { byHandTaskChecks } from '../fleet/unrunnable-checks';
import { autonomousSpecChanges } from '../fleet/adjustment-approval';
import { ExitResultSchema, type SagaStatus } from '../contract/state';

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

/** One line per criterion for the table: the given summary, else its output's result line. */
function summaryOf(result: ExitCriterionResult | undefined, check: string): string {
  if (result?.summary) return result.summary;
  if (isByHand(result)) return result!.evidence ?? '';
  const lines = (result?.output ?? '').replace(/\s+$/, '').split('\n');
  if (lines[0] === `$ ${check}`) lines.shift();
  return checkResultLine(lines.join('\n'));
}

/** The evidence file as a link; for a criterion verified by hand, who verifies it (no file). */
function evidenceOf(result: ExitCriterionResult | undefined): string | null {
  if (!result?.evidence) return null;
  if (isByHand(result)) return result.evidence;
  return `[${result.evidence}](${result.evidence})`;
}

const isByHand = (result: ExitCriterionResult | undefined): boolean =>
  result?.result === 'by-hand' || result?.result === 'verified-by-user';

/** A criterion's step: the planner's own steps when it wrote them, else its check to run by hand. */
function criterionStep(c: Plan['exit_criteria'][number], result: ExitCriterionResult | undefined): string {
  const summary = summaryOf(result, c.check);
  const manual = (c.manual ?? []).map(oneLine);
  const head = `${c.id} — ${oneLine(c.text)}: `;
  if (c.by_hand) {
    const how = manual.length ? manual.join('; ') : `check by hand that it holds`;
    const confirmed =
      result?.result === 'verified-by-user'
        ? `Verified by the user: ${summary}.`
        : 'Accepting the saga confirms you verified it.';
    return `${head}${how} (its check ${code(c.check)} cannot run here${c.finding ? `: ${oneLine(c.finding)}` : ''}). ${confirmed}`;
  }
  const saw = result ? ` The saga's run: ${result.result}${summary ? `, ${summary}` : ''}.` : '';
  if (manual.length) return `${head}${manual.join('; ')}. (Its check: ${code(c.check)}.)${saw}`;
  return `${head}run ${code(c.check)} and expect exit code 0.${saw}`;
}

/** Task checks the user chose to verify by hand (they could not run here), one step each. */
function taskByHandSteps(status: SagaStatus): string[] {
  return status.milestones.flatMap((m) =>
    m.tasks.flatMap((t) =>
      byHandTaskChecks(t.specChanges).map(
        (c) =>
          `Task ${t.id} — ${oneLine(c.text)}: check by hand that it holds (its check ${code(c.check)} cannot run here). Accepting the saga confirms you verified it.`,
      ),
    ),
  );
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
    ...plan.exit_criteria.map((c) =>
      criterionStep(
        c,
        exitResults.find((r) => r.id === c.id),
      ),
    ),
    ...taskByHandSteps(status),
  ];
  if (environment?.launch)
    steps.push(
      `Launch the program with ${code(environment.launch)} and try the feature: ${oneLine(status.goal)}`,
    );
  steps.push(...(input.manualSteps ?? []).map(oneLine));
  steps.push(`Remove the checkout when done: ${code(`git -C ${repo} worktree remove ${where}`)}`);
  return steps;
}

/** The evidence of one criterion (docs/PROCEDURE.md §5.3): what ran, where, its result and its output's end. */
function criterionEvidence(
  criterion: Plan['exit_criteria'][number],
  result: ExitCriterionResult | undefined,
  integration: string,
): string {
  const lines = [
    `### ${criterion.id}: ${oneLine(criterion.text)} — ${result?.result ?? 'not run'}`,
    '',
    `- **Check:** ${code(criterion.check)}, run in a fresh checkout of ${code(integration)} (exit code 0 means met)`,
    `- **Evidence:** ${evidenceOf(result) ?? 'none kept'}`,
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
    cell(evidenceOf(result) ?? '—'),
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
      `- **Exit criteria passed:** ${passed} of ${plan.exit_criteria.length}${byHandCount(exitResults)}`,
    ].join('\n'),
    section('What was built', whatWasBuilt(status, input.built)),
    pullRequestsSection(status.pullRequests),
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
    ...autonomousSection(status),
    section('Open issues', bullets(open)),
  ]);
}

/** How many criteria are verified by hand: awaiting the user's confirmation, or confirmed. */
function byHandCount(results: readonly ExitCriterionResult[]): string {
  const open = results.filter((r) => r.result === 'by-hand').length;
  const done = results.filter((r) => r.result === 'verified-by-user').length;
  return [
    ...(done ? [`, ${done} verified by the user`] : []),
    ...(open ? [`, ${open} to verify by hand (Manual verification; accepting confirms)`] : []),
  ].join('');
}

/** Spec changes of checks or scope --autonomous made without asking: the user's to confirm or report against. */
function autonomousSection(status: SagaStatus): string[] {
  const changes = autonomousSpecChanges(status.milestones);
  if (!changes.length) return [];
  return [
    section(
      'Decided under --autonomous without asking',
      [
        "The planner changed these tasks' checks or scope, which you are otherwise asked to approve " +
          '(decisions.md has each with its reason). Report an issue at acceptance to undo one.',
        '',
        bullets(changes),
      ].join('\n'),
    ),
  ];
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
