/**
 * Acceptance (docs/PROCEDURE.md §6): the user accepts, or reports issues that become a new milestone of tasks for a
 * focused implementation round. The final acceptance always belongs to the user, in every mode.
 * Each issue comes with the check that shows it fixed (`ISSUE :: check: COMMAND`); for an issue without one
 * the user is asked for one, or says `none` (review only), so a fix is never judged by checks that already
 * passed before it.
 */
import {
  ISSUE_CHECK_OPTIONS,
  ISSUE_SYNTAX_EXAMPLE,
  parseIssueLines,
  type AcceptanceIssue,
} from '../../domain/planning/acceptance-issues';
import { patched, setHandler } from '@temporalio/workflow';
import { issuesMilestone } from '../../domain/fleet/fleet';
import { withCorrectionScopes } from '../../domain/saga/decision-fixes';
import { autoRunPromptLine, type AutoRunFile } from '../../domain/record/auto-run-files';
import { reconciliationPromptLines } from '../../domain/record/reconciliation';
import {
  acceptanceCorrectionLines,
  parseDecisionCorrections,
  type CorrectableDecision,
} from '../../domain/planning/memory';
import type { PlanMilestone, PlanOutline } from '../../domain/plan';
import { interactionAnsweredSignal } from '../../domain/saga/messages';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { Answer, InteractionRequest } from '../../domain/contract/state';
import { activitiesFor } from '../activity-proxies';
import { PATCHES } from '../patches';
import { ask, askAll, recordAnswer } from '../ask';
import { byHandAcceptanceLine } from '../../domain/planning/unachievable';
import type { ValidationResult } from './validation';
import { ACCEPTANCE_CHOICE } from '../../domain/contract/answer-choices';

export interface AcceptanceInput {
  ctx: SagaContext;
  plan: PlanOutline;
  round: number;
  validation: ValidationResult;
  reportPath: string;
  /** Tasks of this saga that did not reach the integration branch (skipped, blocked), with why. */
  unresolved?: string[];
  /** The autonomous decisions (D1, D2, ...) a reported issue may correct; absent when there are none. */
  decisions?: CorrectableDecision[];
  /** Files the work adds or changes that tools run on their own; the prompt names them. */
  autoRunFiles?: AutoRunFile[];
  /** What `saga continue` found differing between the record and git (lost merges too); the prompt says it. */
  reconciliation?: string[];
  /** Spec changes of checks or scope decided under --autonomous without asking; the prompt lists them. */
  autonomousChanges?: string[];
  /** Task checks that could not run, left to the user to verify by hand; the prompt lists them. */
  byHandChecks?: string[];
  /**
   * `delivery: pr`: the PRs as the prompt shows them, and which time acceptance is asked this round (after
   * `mark ready` or a refused merge it is asked again). The options are then accept, merge, mark ready and
   * report issues (a local fast-forward would bypass the PRs).
   */
  delivery?: { prLines: string[]; ask: number; note?: string };
}

export type AcceptanceResult =
  /** `choice`: the option answered (`merge`, `mark ready` with delivery); absent in results of older code. */
  | { accepted: true; fastForward: boolean; by: string; choice?: string }
  | { accepted: false; issues: string[]; milestone: PlanMilestone; by: string };

export const ACCEPTANCE_OPTIONS = [
  ACCEPTANCE_CHOICE.accept,
  ACCEPTANCE_CHOICE.acceptAndFastForward,
  ACCEPTANCE_CHOICE.reportIssues,
] as const;

/** With `delivery: pr`. */
export const DELIVERY_ACCEPTANCE_OPTIONS = [
  ACCEPTANCE_CHOICE.accept,
  ACCEPTANCE_CHOICE.merge,
  ACCEPTANCE_CHOICE.markReady,
  ACCEPTANCE_CHOICE.reportIssues,
] as const;

/** The id of the question asking for the check of issue `n` (1-based) of round `round`. */
export const issueCheckInteractionId = (round: number, n: number): string =>
  `acceptance-${round}-issue-${n}-check`;

/** How acceptance asks: the saga asks in-process; a child workflow asks the saga by signal. */
export interface Asker {
  ask: (request: InteractionRequest) => Promise<Answer>;
  askAll: (requests: InteractionRequest[]) => Promise<Answer[]>;
}

/**
 * Acceptance as a child workflow: what sagas of earlier versions start (the saga now runs `acceptRound`
 * itself: acceptance only asks, and a child cost the saga's history a start, a result and a signal each way).
 */
export async function acceptanceWorkflow(input: AcceptanceInput): Promise<AcceptanceResult> {
  // The child's API: answers to its questions come back here (the saga's own acceptance needs none).
  setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer));
  const saga = input.ctx.sagaWorkflowId;
  return acceptRound(input, {
    ask: (request) => ask(saga, request),
    askAll: (requests) => askAll(saga, requests),
  });
}

export async function acceptRound(
  {
    ctx,
    plan,
    round,
    validation,
    reportPath,
    unresolved = [],
    decisions = [],
    autoRunFiles = [],
    reconciliation = [],
    autonomousChanges = [],
    byHandChecks = [],
    delivery,
  }: AcceptanceInput,
  asker: Asker,
): Promise<AcceptanceResult> {
  const summary = validation.criteria.map((c) => `${c.id} ${c.result}`).join(', ');
  // Exit criteria that pass do not make a saga done while a task (a reported issue's fix, say) never landed.
  const notLanded = unresolved.length ? ` Not integrated: ${unresolved.join('; ')}.` : '';
  const autoRun = autoRunPromptLine(autoRunFiles);
  const byHand = byHandAcceptanceLine(validation.criteria);
  const options = delivery ? [...DELIVERY_ACCEPTANCE_OPTIONS] : [...ACCEPTANCE_OPTIONS];
  const answer = await asker.ask({
    id: delivery && delivery.ask > 1 ? `acceptance-${round}-${delivery.ask}` : `acceptance-${round}`,
    kind: 'acceptance',
    prompt:
      `Review ${reportPath} (exit criteria: ${summary}).${notLanded} Accept the saga, or report issues: one per line in ` +
      `--text, each with the check that passes once it is fixed after ' :: check: ' ` +
      `(e.g. '${ISSUE_SYNTAX_EXAMPLE}'); an issue without one is asked for one.` +
      acceptanceCorrectionLines(decisions)
        .map((line) => `\n${line}`)
        .join('') +
      (autoRun ? `\n${autoRun}` : '') +
      reconciliationPromptLines(reconciliation)
        .map((line) => `\n${line}`)
        .join('') +
      autonomousChangesLine(autonomousChanges) +
      (byHand ? `\n${byHand}` : '') +
      byHandChecksLine(byHandChecks) +
      (delivery ? deliveryLines(delivery) : ''),
    options,
    recommended:
      validation.passed && !unresolved.length ? 0 : options.indexOf(ACCEPTANCE_CHOICE.reportIssues),
    textRequiredFor: [ACCEPTANCE_CHOICE.reportIssues],
    textFormat: 'acceptance-issues',
  });
  if (answer.choice !== ACCEPTANCE_CHOICE.reportIssues) {
    return {
      accepted: true,
      fastForward: answer.choice === ACCEPTANCE_CHOICE.acceptAndFastForward,
      by: answer.user,
      ...(delivery ? { choice: answer.choice } : {}),
    };
  }
  // The respond validator refused text that does not parse; an answer to an interaction opened before the
  // format existed is taken line by line, as then.
  const parsed = parseIssueLines(answer.text);
  let issues: AcceptanceIssue[] = parsed.ok
    ? parsed.value
    : (answer.text ?? '')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .map((text) => ({ text, check: null }));
  issues = await askMissingChecks(asker, round, issues);
  // A user contradicting an autonomous decision after approval is a correction, stored as a learning.
  const { corrections } = parseDecisionCorrections(issues.map((i) => i.text).join('\n'), decisions);
  if (corrections.length)
    await activitiesFor(ctx).quick.recordCorrections({
      repo: ctx.repo,
      saga: ctx.name,
      sagaDir: ctx.sagaDir,
      user: answer.user,
      corrections,
      at: `acceptance round ${round}`,
    });
  const milestone = issuesMilestone(plan, issues, round);
  const texts = issues.map((i) => i.text);
  return {
    accepted: false,
    issues: texts,
    milestone:
      corrections.length && patched(PATCHES.correctionSpecs)
        ? withCorrectionScopes(milestone, texts, corrections)
        : milestone,
    by: answer.user,
  };
}

/** The saga's PRs in the prompt, and what each delivery option does. */
const deliveryLines = ({ prLines, note }: NonNullable<AcceptanceInput['delivery']>): string =>
  `\nPull requests (bottom of the stack first; CI and review are watched while you decide):\n` +
  prLines.join('\n') +
  (note ? `\n${note}` : '') +
  `\n'merge' merges them in order through the forge (branch protection holds); 'mark ready' takes them ` +
  `out of draft and asks again; 'accept' leaves them open for your team.`;

/** Task checks the user chose to verify by hand: accepting confirms them, as for exit criteria. */
const byHandChecksLine = (checks: string[]): string =>
  checks.length
    ? `\nTask checks to verify by hand before you accept (they could not run here; REPORT.md's Manual verification has a step for each, and accepting confirms them): ${checks.join('; ')}.`
    : '';

/** The spec changes --autonomous decided without asking, for the user to confirm or report against. */
const autonomousChangesLine = (changes: string[]): string =>
  changes.length
    ? `\nDecided under --autonomous without asking (spec changes of checks or scope): ${changes.join('; ')}.`
    : '';

/** One question per issue reported without a check, all open at once: a command, or `none` (review only). */
async function askMissingChecks(
  asker: Asker,
  round: number,
  issues: AcceptanceIssue[],
): Promise<AcceptanceIssue[]> {
  const missing = issues.map((issue, i) => ({ issue, n: i + 1 })).filter(({ issue }) => issue.check === null);
  if (!missing.length) return issues;
  const answers = await asker.askAll(
    missing.map(({ issue, n }) => ({
      id: issueCheckInteractionId(round, n),
      kind: 'question' as const,
      prompt:
        `Issue ${n} has no check: "${issue.text}". Answer 'check' with a command in --text that exits 0 once ` +
        `it is fixed (run in the fix's checkout, e.g. grep -q Bonjour greeting.txt), or 'none' to have the ` +
        `fix judged by review only (it must still change files and pass the exit criteria).`,
      options: [...ISSUE_CHECK_OPTIONS],
      recommended: 0,
      textRequiredFor: ['check'],
      textFormat: 'check-command' as const,
    })),
  );
  const checks = new Map(missing.map(({ n }, i) => [n, answers[i]!]));
  return issues.map((issue, i) => {
    const given = checks.get(i + 1);
    return given?.choice === 'check' ? { ...issue, check: given.text!.trim() } : issue;
  });
}
