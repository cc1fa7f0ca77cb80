/**
 * Milestone integration (docs/PROCEDURE.md §4): merge the milestone's task branches into the
 * integration branch in dependency order, hand conflicts to a resolver agent, run milestone validation,
 * and revert to the pre-integration commit when it fails (the branches and commits stay in git).
 */
import { addUsage, noUsage } from '../../domain/agents/usage';
import {
  conflictRedelegations,
  describeBlame,
  type MilestoneCheckResult,
  tasksToRedelegate,
  validationRedelegations,
  type Redelegation,
} from '../../domain/fleet/milestone-failure';
import { mergeOrder } from '../../domain/fleet/schedule';
import {
  isNotRunnable,
  unrunnableChecks,
  unrunnableReason,
  type UnrunnableCheck,
} from '../../domain/fleet/unrunnable-checks';
import type { PlanMilestone } from '../../domain/plan';
import { integrationBranch, taskRef, worktreePath } from '../../domain/contract/naming';
import { processEndWhy } from '../../domain/text/process-end';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { MilestoneState, TaskState, Usage } from '../../domain/contract/state';
import { patched } from '@temporalio/workflow';
import { activitiesFor } from '../activity-proxies';
import { PATCHES } from '../patches';
import { profileFor } from '../shared';

export type { Redelegation };

/** `usage`: what the resolver agents spent (task agents are counted by the fleet). */
export type IntegrationResult =
  | { ok: true; head: string; usage: Usage }
  | {
      ok: false;
      redelegate: Redelegation[];
      usage: Usage;
      /** Validation checks that cannot run here (126/127): the user is asked, no task is redone. */
      unrunnable?: { checks: UnrunnableCheck[]; evidence: string[] };
    };

/**
 * The saga budget's gate before each resolver run (given what this integration has spent): the cap for the
 * run (null: no budget), or 'stop' when the user stopped the saga instead of raising it.
 */
type ResolverBudget = (spentHere: number) => Promise<number | null | 'stop'>;

export async function integrateMilestone(
  ctx: SagaContext,
  spec: PlanMilestone,
  state: MilestoneState,
  round: number,
  resolverBudget: ResolverBudget,
  /** A line for the saga's log (the implementation phase keeps it with its task states). */
  log: (line: string) => void,
): Promise<IntegrationResult> {
  const run = new MilestoneIntegration(ctx, spec, state, round, log);
  await run.prepare();
  const conflicted = await run.mergeTasks(resolverBudget);
  // The others merged cleanly: that integrated state is what the conflicting tasks are redone on top of.
  if (conflicted.length > 0) return run.sendBackConflicts(conflicted);
  return run.validate();
}

/** One integration of a milestone: its worktree on the integration branch, the merges and what they cost. */
class MilestoneIntegration {
  private readonly activities;
  private readonly branch: string;
  private readonly worktree: string;
  private readonly label: string;
  private readonly toMerge: string[];
  /** The integration branch's commit before this integration. */
  private pre = '';
  private usage: Usage = noUsage();

  constructor(
    private readonly ctx: SagaContext,
    private readonly spec: PlanMilestone,
    private readonly state: MilestoneState,
    round: number,
    private readonly log: (line: string) => void,
  ) {
    this.activities = activitiesFor(ctx);
    this.branch = integrationBranch(ctx.name);
    this.worktree = worktreePath(ctx, 'integration');
    this.label = `m${spec.id}-r${round}`;
    this.toMerge = mergeOrder(
      spec.tasks.map((t) => ({ ref: taskRef(spec.id, t.id), dependsOn: t.depends_on })),
    ).filter((ref) => state.tasks.find((t) => t.id === ref)?.status === 'passed');
  }

  private task(ref: string): TaskState {
    return this.state.tasks.find((t) => t.id === ref)!;
  }

  private messageFor(ref: string): string {
    return `saga(${this.ctx.name}): integrate ${ref} ${this.task(ref).slug}`;
  }

  async prepare(): Promise<void> {
    const { ctx, branch, worktree } = this;
    ({ head: this.pre } = await this.activities.long.prepareWorktree({
      repo: ctx.repo,
      branch,
      worktree,
      base: ctx.base,
    }));
  }

  /** Merges the passed tasks in dependency order; returns those whose conflict the resolver did not fix. */
  async mergeTasks(resolverBudget: ResolverBudget): Promise<{ ref: string; files: string[] }[]> {
    const { quick } = this.activities;
    const { worktree, toMerge } = this;
    const conflicted: { ref: string; files: string[] }[] = [];
    for (let next = 0; next < toMerge.length;) {
      // From `toMerge[next]` on, in one activity, up to the first conflict.
      const step = await quick.mergeBranches({
        worktree,
        merges: toMerge
          .slice(next)
          .map((ref) => ({ branch: this.task(ref).branch, message: this.messageFor(ref) })),
      });
      next += step.merged;
      if (!step.conflict) continue;
      const ref = toMerge[next++]!;
      const files = step.conflict.conflictedFiles;
      this.log(`Merge conflict integrating ${ref}: ${files.join(', ')}; asking the resolver`);
      const cap = await resolverBudget(this.usage.costUsd);
      if (cap === 'stop') {
        await quick.abortMerge({ worktree });
        conflicted.push({ ref, files });
        this.log(`Resolver not started for ${ref}: the saga was stopped at its budget`);
        continue;
      }
      if (!(await this.resolve(ref, files, cap))) conflicted.push({ ref, files });
    }
    return conflicted;
  }

  /** The resolver agent on a conflicted merge; returns whether it completed the merge. */
  private async resolve(ref: string, files: string[], cap: number | null): Promise<boolean> {
    const { ctx, spec, worktree } = this;
    const { quick, long } = this.activities;
    const task = this.task(ref);
    const message = this.messageFor(ref);
    const resolver = await long.runRoleAgent({
      template: 'resolver',
      sagaName: ctx.name,
      sagaDir: ctx.sagaDir,
      role: 'resolver',
      stage: 'merge',
      taskId: ref,
      attempt: 1,
      profile: profileFor(ctx),
      workdir: worktree,
      attachments: [],
      context: { branch: task.branch, conflictedFiles: files, milestone: spec.id },
      runLabel: `${this.label}-resolve-${task.key}`,
      ...(cap !== null ? { maxBudgetUsd: cap } : {}),
    });
    this.usage = addUsage(this.usage, resolver.usage);
    const done = await quick.completeMerge({ worktree, message });
    if (done.ok) {
      this.log(`Resolver fixed the conflict of ${ref}`);
      return true;
    }
    await quick.abortMerge({ worktree });
    const markers = done.refused ?? `markers left in ${done.remainingMarkers.join(', ')}`;
    // The resolver's own end says more when it failed (a crash, a timeout) than the markers it left.
    const ended = resolver.exitCode === 0 && !resolver.timedOut && !resolver.idle;
    const why = ended ? markers : `${markers}; resolver ${processEndWhy(resolver)}`;
    this.log(`Resolver could not fix ${ref} (${why})`);
    return false;
  }

  /**
   * The milestone goes back to its pre-integration commit (the integrated commit stays reachable from the
   * redone task branches) and is merged again once the conflicting tasks pass.
   */
  async sendBackConflicts(conflicted: { ref: string; files: string[] }[]): Promise<IntegrationResult> {
    const { quick } = this.activities;
    const { ctx, worktree, pre } = this;
    const { commit: head } = await quick.headCommit({ worktree });
    await quick.resetHard({ worktree, commit: pre });
    await quick.removeWorktree({ repo: ctx.repo, worktree, copies: ctx.settings.worktree.copy });
    this.log(
      `Milestone ${this.spec.id} reverted to ${pre.slice(0, 10)}; re-delegating ${conflicted.map((c) => c.ref).join(', ')} on top of ${head.slice(0, 10)}`,
    );
    return { ok: false, usage: this.usage, redelegate: conflictRedelegations(conflicted, head) };
  }

  /** Milestone validation on the merged tree: integrated when it passes, else reverted and sent back. */
  async validate(): Promise<IntegrationResult> {
    const { ctx, spec, worktree, branch } = this;
    const { quick, long } = this.activities;
    const copies = ctx.settings.worktree.copy;
    // Milestone checks need what task checks have (`worktree.copy` files, installed dependencies), set up
    // on the merged tree so that the dependencies its tasks added are there too.
    if (copies.length > 0 || ctx.settings.worktree.setup.length > 0) {
      await long.setUpWorktree({
        repo: ctx.repo,
        branch,
        worktree,
        copyFiles: copies,
        setup: ctx.settings.worktree.setup,
        passEnv: ctx.settings.passEnv,
        sandbox: ctx.settings.sandbox,
      });
    }
    const checks = await long.runChecks({
      sagaDir: ctx.sagaDir,
      cwd: worktree,
      checks: spec.validation,
      namePaths: true,
      label: `${this.label}-validation`,
      timeoutMs: ctx.settings.checkTimeoutMs,
      passEnv: ctx.settings.passEnv,
      sandbox: ctx.settings.sandbox,
    });
    if (checks.passed) {
      const { commit: head } = await quick.headCommit({ worktree });
      await quick.removeWorktree({ repo: ctx.repo, worktree, copies });
      this.log(
        `Milestone ${spec.id} integrated at ${head.slice(0, 10)}; merge order ${this.toMerge.join(', ')}; validation passed`,
      );
      return { ok: true, head, usage: this.usage };
    }
    await quick.resetHard({ worktree, commit: this.pre });
    await quick.removeWorktree({ repo: ctx.repo, worktree, copies });
    const failed = checks.results.filter((r) => r.exitCode !== 0 || r.timedOut);
    // No task's redo makes a missing program appear: the user decides about the check first.
    const unrunnable = unrunnableChecks(failed);
    if (unrunnable.length && patched(PATCHES.unrunnableChecks)) {
      this.log(
        `Integration: milestone ${spec.id} validation ${unrunnableReason(unrunnable)}; asking the user`,
      );
      const evidence = failed.filter((r) => isNotRunnable(r.exitCode, r.timedOut)).map((r) => r.outputPath);
      return { ok: false, usage: this.usage, redelegate: [], unrunnable: { checks: unrunnable, evidence } };
    }
    return this.sendBackFailures(failed);
  }

  /** Only the tasks the failure points at are redone; the others stay passed and are merged again as they are. */
  private sendBackFailures(failures: MilestoneCheckResult[]): IntegrationResult {
    const { spec } = this;
    const suspects = this.toMerge.map((ref) => {
      const planned = spec.tasks.find((t) => taskRef(spec.id, t.id) === ref)!;
      return {
        ref,
        owns: planned.owns,
        checks: planned.validation.map((v) => v.check),
        changedFiles: this.task(ref).changedFiles,
      };
    });
    const blame = tasksToRedelegate(
      failures.map((f) => ({ check: f.check, output: f.tail, namedPaths: f.namedPaths })),
      suspects,
    );
    this.log(
      `Integration: milestone ${spec.id} validation ${failures.map((f) => `'${f.check}'`).join(', ')} failed; reverted to ${this.pre.slice(0, 10)}; re-delegating ${describeBlame(blame)}`,
    );
    return { ok: false, usage: this.usage, redelegate: validationRedelegations(spec.id, failures, blame) };
  }
}
