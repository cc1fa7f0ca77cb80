/**
 * Stand-in activities for the fleet-decision tests: plain async functions registered under the real
 * activity names (src/activities/index.ts), taking the real inputs and returning the real result shapes,
 * scripted per scenario. Every call is recorded with its input, in order, so a test asserts what the
 * workflows decided: which activity ran, for which task and delegation, with what notes and checks.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { SagaActivities } from '../../src/activities';
import type { Plan, PlanTask } from '../../src/domain/plan';

type Name = keyof SagaActivities;
export type Input<K extends Name> = Parameters<SagaActivities[K]>[0];
type Result<K extends Name> = Awaited<ReturnType<SagaActivities[K]>>;

/** What one attempt of a task does: its checks pass or fail, cannot run (exit 127), or the agent reports blocked. */
export type AttemptScript = 'pass' | 'fail' | 'unrunnable' | { blocked: string };

/** What one integration's milestone validation does. */
export type IntegrationScript = 'pass' | { fail: string } | 'unrunnable';

export interface FleetScript {
  /** Per task ref ("1.2"), the outcome of each attempt in turn; the last one repeats. */
  attempts: Record<string, AttemptScript[]>;
  /** The planner's adjustment of a blocked task: the fields it changes (absent: it changes nothing). */
  adjust?: (task: PlanTask) => Partial<PlanTask>;
  /** A task ref whose branch conflicts at the first integration's merge (the resolver leaves markers). */
  conflictsOnce?: string;
  /** Each integration's milestone validation in turn; the last one repeats (default: it passes). */
  integrations?: IntegrationScript[];
}

export interface Call {
  name: Name;
  input: Record<string, unknown>;
}

const nth = <T>(list: T[], n: number): T => list[Math.min(n, list.length - 1)]!;

const agentRun = (runLabel: string, report: Record<string, unknown> | null) => ({
  exitCode: 0,
  signal: null,
  timedOut: false,
  idle: false,
  cancelled: false,
  durationMs: 10,
  outputBytes: 10,
  lastLine: '',
  stderrTail: null,
  transcriptPath: `/runs/${runLabel}/transcript.txt`,
  promptPath: `/runs/${runLabel}/prompt.md`,
  reportPath: `/runs/${runLabel}/report.json`,
  report,
  reportError: report ? null : 'no JSON',
  findings: null,
  usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.01 },
  sessionId: `session-${runLabel}`,
  host: 'stand-in',
});

const exitOf = (outcome: AttemptScript | IntegrationScript): number =>
  outcome === 'pass' ? 0 : outcome === 'unrunnable' ? 127 : 1;

const checkResults = (
  label: string,
  checks: { text: string; check: string }[],
  exitCode: number,
  tail: string,
): Result<'runChecks'> => ({
  passed: exitCode === 0,
  results: checks.map((c, i) => ({
    ...c,
    exitCode,
    timedOut: false,
    durationMs: 5,
    outputPath: `/runs/${label}/check-${i + 1}.txt`,
    tail: exitCode === 0 ? 'ok' : tail,
  })),
});

const handoff = (branch: string, changedFiles: string[]) => ({
  commit: `commit-of-${branch}`,
  committed: changedFiles.length > 0,
  changedFiles,
  changedFileCount: changedFiles.length,
  removed: true,
  notes: [] as string[],
});

const prepared = (input: { worktree: string; branch: string }) => ({
  worktree: input.worktree,
  branch: input.branch,
  baseCommit: 'base-commit',
  head: 'base-commit',
  created: true,
  reused: false,
  copiedFiles: [],
  skippedFiles: [],
  setupRan: false,
  setupLogs: [],
  notes: [],
  startCommit: 'base-commit',
  conflicts: [],
});

/** The planner's answer to a `revise` run: the task's plan with the script's changes, or as it came. */
function revisedPlan(plan: Plan, adjust: FleetScript['adjust']): Plan {
  const milestones = plan.milestones.map((m) => ({
    ...m,
    tasks: m.tasks.map((t) => ({ ...t, ...(adjust?.(t) ?? {}) })),
  }));
  return { ...plan, milestones };
}

/** The stand-in activities and the calls they recorded. */
export function standInActivities(script: FleetScript) {
  const calls: Call[] = [];
  const attemptsOf = new Map<string, number>();
  /** Integrations started (each prepares the integration worktree) and milestone validations run. */
  let integrations = 0;
  let validations = 0;
  const record = (name: Name, input: unknown) =>
    calls.push({ name, input: input as Record<string, unknown> });
  const task = (agent: Input<'runTaskAttempt'>['agent']) => (agent.context as { task: PlanTask }).task;

  const activities = {
    async runTaskAttempt(input: Input<'runTaskAttempt'>): Promise<Result<'runTaskAttempt'>> {
      record('runTaskAttempt', input);
      const ref = input.agent.taskId!;
      const n = attemptsOf.get(ref) ?? 0;
      attemptsOf.set(ref, n + 1);
      const outcome = nth(script.attempts[ref] ?? ['pass'], n);
      const label = input.agent.runLabel;
      const report = typeof outcome === 'object' ? { status: 'blocked', reason: outcome.blocked } : {};
      const checks = checkResults(label, input.checks.checks, exitOf(outcome), `${ref} check failed`);
      const message = checks.passed ? input.handoff.onPass : input.handoff.onFail;
      return {
        prepared: input.prepare ? prepared(input.prepare) : null,
        run: agentRun(label, report),
        checks,
        passed: checks.passed,
        handoff: message === null ? null : handoff(input.handoff.branch!, task(input.agent).owns),
      };
    },
    async handoffTask(input: Input<'handoffTask'>) {
      record('handoffTask', input);
      return handoff(input.branch!, []);
    },
    async prepareTaskWorktree(input: Input<'prepareTaskWorktree'>) {
      record('prepareTaskWorktree', input);
      return prepared(input);
    },
    async resetTaskBranch(input: Input<'resetTaskBranch'>) {
      record('resetTaskBranch', input);
      return {};
    },
    async runRoleAgent(input: Input<'runRoleAgent'>): Promise<Result<'runRoleAgent'>> {
      record('runRoleAgent', input);
      if (input.role === 'resolver') return agentRun(input.runLabel, null);
      if (input.stage !== 'revise')
        throw ApplicationFailure.nonRetryable(`no stand-in for the ${input.role} (${input.stage})`);
      const plan = (input.context as { plan: Plan }).plan;
      return agentRun(input.runLabel, revisedPlan(plan, script.adjust) as unknown as Record<string, unknown>);
    },
    async prepareWorktree(input: Input<'prepareWorktree'>) {
      record('prepareWorktree', input);
      return { ...prepared(input), head: `pre-integration-${++integrations}` };
    },
    async mergeBranches(input: Input<'mergeBranches'>): Promise<Result<'mergeBranches'>> {
      record('mergeBranches', input);
      const ref = script.conflictsOnce;
      const at = input.merges.findIndex((m) => ref && m.message.includes(` ${ref} `));
      if (integrations > 1 || at < 0) return { merged: input.merges.length, conflict: null, head: 'merged' };
      const conflict = { branch: input.merges[at]!.branch, conflictedFiles: ['src/shared.ts'] };
      return { merged: at, conflict, head: 'merged' };
    },
    async completeMerge(input: Input<'completeMerge'>) {
      record('completeMerge', input);
      return { ok: false, remainingMarkers: ['src/shared.ts'], head: 'merged', committed: false, notes: [] };
    },
    async abortMerge(input: Input<'abortMerge'>) {
      record('abortMerge', input);
      return { aborted: true, head: 'merged' };
    },
    async setUpWorktree(input: Input<'setUpWorktree'>) {
      record('setUpWorktree', input);
      return { copiedFiles: [], skippedFiles: [], setupLogs: [] };
    },
    async runChecks(input: Input<'runChecks'>): Promise<Result<'runChecks'>> {
      record('runChecks', input);
      const outcome = nth<IntegrationScript>(script.integrations ?? ['pass'], validations++);
      const tail = typeof outcome === 'object' ? outcome.fail : 'sh: 1: not found';
      return checkResults(input.label, input.checks, exitOf(outcome), tail);
    },
    async headCommit(input: Input<'headCommit'>) {
      record('headCommit', input);
      return { commit: `integrated-${integrations}`, branch: 'integration' };
    },
    async resetHard(input: Input<'resetHard'>) {
      record('resetHard', input);
      return {};
    },
    async removeWorktree(input: Input<'removeWorktree'>) {
      record('removeWorktree', input);
      return { removed: true, notes: [] };
    },
    async recordMilestone(input: Input<'recordMilestone'>) {
      record('recordMilestone', input);
      return { file: '/saga/milestones/m1.json', tasks: 0 };
    },
    async prependDecision(input: Input<'prependDecision'>) {
      record('prependDecision', input);
      return { added: true };
    },
    async notifyNotice(input: Input<'notifyNotice'>) {
      record('notifyNotice', input);
      return { sent: false };
    },
    async updateManifest(input: Input<'updateManifest'>) {
      record('updateManifest', input);
      return { front: {} };
    },
  };
  return { activities, calls };
}

/** The inputs of the recorded calls of one activity, in order. */
export const inputsOf = <K extends Name>(calls: Call[], name: K): Input<K>[] =>
  calls.filter((c) => c.name === name).map((c) => c.input as Input<K>);
