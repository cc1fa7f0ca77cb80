/**
 * How a worker task's attempt and review end, decided from what its agent run and checks returned. Pure, for
 * the task workflow: the checks decide, except for failures no retry can fix (an agent that cannot run, or
 * one that reported itself blocked), which end the task at once.
 */
import type { AgentFailure } from '../agents/cli-output';
import { stderrSuffix } from '../text/process-end';
import { agentBlockedReason, agentBlockedTaskReason } from './blocked-report';
import { reviewBudgetReason, type BudgetGrant } from './budget';
import { gapOptionsOf, type GapOptions } from './spec-gap-options';

/** What an attempt's agent run reports (the fields the outcome depends on). */
export interface AttemptRun {
  transcriptPath: string;
  report: Record<string, unknown> | null;
  failure?: AgentFailure | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  idle: boolean;
  /** The last lines of its stderr (a crash's own words), shown with every failure reason. */
  stderrTail?: string | null;
}

/** One of the task's checks as run after the agent. */
export interface AttemptCheck {
  text: string;
  check: string;
  exitCode: number | null;
  timedOut: boolean;
  outputPath: string;
  stderrTail?: string;
}

/**
 * The attempt's outcome. `failures` (files) and `notes` are what the next attempt's agent gets; a pass
 * keeps the earlier ones. `fatal`: no further attempt of this delegation would change it.
 */
export type AttemptOutcome =
  | { passed: true; evidence: string[] }
  | {
      passed: false;
      evidence: string[];
      failures: string[];
      notes: string[];
      reason: string;
      fatal: boolean;
      /** The agent's own reason when it reported blocked. */
      agentBlocked: string | null;
      /** The answers the agent offered with its blocked report (shown to the user, the recommended one marked). */
      gapOptions?: GapOptions;
      /** The agent finished and its checks failed (what an adjusted spec may resolve). */
      checksFailed: boolean;
      /** The agent timed out, hung or crashed before its checks ran (an adjusted spec may resolve it too). */
      agentFailed?: boolean;
    };

const failedChecks = (checks: { results: AttemptCheck[] } | null) =>
  checks?.results.filter((r) => r.exitCode !== 0 || r.timedOut) ?? [];

const outputsOf = (run: AttemptRun, checks: { results: AttemptCheck[] } | null) =>
  checks ? checks.results.map((r) => r.outputPath) : [run.transcriptPath];

const withGapOptions = (report: AttemptRun['report']) => {
  const gapOptions = gapOptionsOf(report);
  return gapOptions ? { gapOptions } : {};
};

/** Attempt `n`'s outcome from its agent run and, when the agent finished, its checks. */
export function classifyAttempt(
  n: number,
  run: AttemptRun,
  checks: { passed: boolean; results: AttemptCheck[] } | null,
): AttemptOutcome {
  const stop = { fatal: false, agentBlocked: null, checksFailed: false };
  if (run.failure && !run.failure.retryable && !checks?.passed) {
    // Paying for the same failure again would not change it: stop with the CLI's own reason.
    return {
      passed: false,
      ...stop,
      fatal: true,
      failures: [run.transcriptPath],
      notes: [`Attempt ${n}: ${run.failure.message}`],
      // The saga's own network diagnosis is whole; the stderr then is the sandbox forwarders' (socat), not the agent's.
      reason:
        run.failure.kind === 'network-unreachable'
          ? run.failure.message
          : `${run.failure.message}${stderrSuffix(run)}`,
      evidence: outputsOf(run, checks),
    };
  }
  // The checks decide: a blocked report whose work passes them is a pass.
  const blockedReason = checks?.passed ? null : agentBlockedReason(run.report);
  if (blockedReason !== null) {
    // The agent says it cannot finish (a spec gap, an external decision): another paid run of the
    // same spec would not change that, so the task stops here and the user is asked.
    return {
      passed: false,
      ...stop,
      fatal: true,
      agentBlocked: blockedReason,
      ...withGapOptions(run.report),
      failures: [...failedChecks(checks).map((r) => r.outputPath), run.transcriptPath],
      notes: [`Attempt ${n}: you reported blocked: ${blockedReason}`],
      reason: agentBlockedTaskReason(blockedReason),
      evidence: outputsOf(run, checks),
    };
  }
  if (!checks) {
    const why = run.timedOut
      ? 'timed out'
      : run.idle
        ? 'printed nothing for too long (hung)'
        : `exited with ${run.exitCode ?? run.signal}`;
    return {
      passed: false,
      ...stop,
      agentFailed: true,
      failures: [run.transcriptPath],
      notes: [`Attempt ${n}: ${run.failure?.message ?? `the agent ${why}`}${stderrSuffix(run)}.`],
      reason: `${run.failure?.message ?? `agent ${why}`}${stderrSuffix(run)}`,
      evidence: [run.transcriptPath],
    };
  }
  const evidence = outputsOf(run, checks);
  if (checks.passed) return { passed: true, evidence };
  const failed = failedChecks(checks);
  const notes = failed.map(
    (r) =>
      `Check failed: ${r.text} (\`${r.check}\`) ${r.timedOut ? 'timed out' : `exit ${r.exitCode}`}${stderrSuffix(r)}`,
  );
  return {
    passed: false,
    ...stop,
    checksFailed: true,
    failures: failed.map((r) => r.outputPath),
    notes,
    reason: notes.join('; '),
    evidence,
  };
}

/** How the task ends after its quality-locked review, when the review did not simply pass. */
export type ReviewEnd =
  | { kind: 'budget'; reason: string }
  | { kind: 'stop'; reviewStop: 'abort' | 'escalated'; reason: string }
  | null;

/**
 * The review's outcome as the task's: a spent budget redoes the task after a raise (its passing work is on
 * the branch, only the review is missing); the user's abort or escalation at a checkpoint means no other
 * run of this task starts without them.
 */
export function reviewEnd(outcome: string, grant: BudgetGrant | null, spentUsd: number): ReviewEnd {
  if (outcome === 'budget') return { kind: 'budget', reason: reviewBudgetReason(grant, spentUsd) };
  if (outcome === 'abort' || outcome === 'escalated')
    return {
      kind: 'stop',
      reviewStop: outcome,
      reason: `quality-locked review: ${outcome === 'abort' ? 'aborted' : 'escalated'} at its checkpoint`,
    };
  return null;
}
