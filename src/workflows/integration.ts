/**
 * Milestone integration (Saga procedure Phase 2, step 5): merge the milestone's task branches into the
 * integration branch in dependency order, hand conflicts to a resolver agent, run milestone validation,
 * and revert to the pre-integration commit when it fails (the branches and commits stay in git).
 */
import { integrationBranch, taskRef, worktreeDirName } from '../domain/saga/naming';
import { describeBlame, tasksToRedelegate } from '../domain/fleet/milestone-failure';
import type { PlanMilestone } from '../domain/plan';
import type { SagaContext } from '../domain/saga/saga-input';
import { mergeOrder } from '../domain/fleet/schedule';
import type { MilestoneState, Usage } from '../domain/saga/state';
import { activitiesFor } from './activity-proxies';
import { profileFor } from './shared';
import { addUsage, noUsage } from '../domain/agents/usage';

/**
 * `note`: why, in one line (the task's status reason); `details`: more for the agent (the failing checks'
 * output). `rebaseOnto`: the task's branch is moved to this commit (the integrated state) before it is redone.
 */
export type Redelegation = {
  ref: string;
  evidence: string[];
  note: string;
  details?: string[];
  rebaseOnto?: string;
};

/** `usage`: what the resolver agents spent (task agents are counted by the fleet). */
export type IntegrationResult =
  { ok: true; head: string; usage: Usage } | { ok: false; redelegate: Redelegation[]; usage: Usage };

export async function integrateMilestone(
  ctx: SagaContext,
  spec: PlanMilestone,
  state: MilestoneState,
  round: number,
  /**
   * The saga budget's gate before each resolver run (given what this integration has spent): the cap for the
   * run (null: no budget), or 'stop' when the user stopped the saga instead of raising it.
   */
  resolverBudget: (spentHere: number) => Promise<number | null | 'stop'>,
  /** A line for the saga's log (the implementation phase keeps it with its task states). */
  log: (line: string) => void,
): Promise<IntegrationResult> {
  const { quick, long } = activitiesFor(ctx);
  const branch = integrationBranch(ctx.name);
  const worktree = `${ctx.worktreeRoot}/${worktreeDirName(ctx.name, 'integration')}`;
  const { head: pre } = await long.prepareWorktree({ repo: ctx.repo, branch, worktree, base: ctx.base });
  const copies = ctx.settings.worktree.copy;
  const label = `m${spec.id}-r${round}`;

  const toMerge = mergeOrder(
    spec.tasks.map((t) => ({ ref: taskRef(spec.id, t.id), dependsOn: t.depends_on })),
  ).filter((ref) => state.tasks.find((t) => t.id === ref)?.status === 'passed');

  let usage: Usage = noUsage();
  const conflicted: { ref: string; files: string[] }[] = [];
  const messageFor = (ref: string) =>
    `saga(${ctx.name}): integrate ${ref} ${state.tasks.find((t) => t.id === ref)!.slug}`;
  /** Merges from `toMerge[from]` on, in one activity, up to the first conflict. */
  const mergeFrom = (from: number) =>
    quick.mergeBranches({
      worktree,
      merges: toMerge.slice(from).map((ref) => ({
        branch: state.tasks.find((t) => t.id === ref)!.branch,
        message: messageFor(ref),
      })),
    });
  for (let next = 0; next < toMerge.length;) {
    const step = await mergeFrom(next);
    next += step.merged;
    if (!step.conflict) continue;
    const ref = toMerge[next++]!;
    const task = state.tasks.find((t) => t.id === ref)!;
    const message = messageFor(ref);
    const merge = step.conflict;
    log(`Merge conflict integrating ${ref}: ${merge.conflictedFiles.join(', ')}; asking the resolver`);
    const cap = await resolverBudget(usage.costUsd);
    if (cap === 'stop') {
      await quick.abortMerge({ worktree });
      conflicted.push({ ref, files: merge.conflictedFiles });
      log(`Resolver not started for ${ref}: the saga was stopped at its budget`);
      continue;
    }
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
      context: { branch: task.branch, conflictedFiles: merge.conflictedFiles, milestone: spec.id },
      runLabel: `${label}-resolve-${task.key}`,
      ...(cap !== null ? { maxBudgetUsd: cap } : {}),
    });
    usage = addUsage(usage, resolver.usage);
    const done = await quick.completeMerge({ worktree, message });
    if (done.ok) {
      log(`Resolver fixed the conflict of ${ref}`);
      continue;
    }
    await quick.abortMerge({ worktree });
    conflicted.push({ ref, files: merge.conflictedFiles });
    log(`Resolver could not fix ${ref} (markers left in ${done.remainingMarkers.join(', ')})`);
  }

  if (conflicted.length > 0) {
    // The others merged cleanly: that integrated state is what the conflicting tasks are redone on top of.
    // The milestone itself goes back to its pre-integration commit (the integrated commit stays reachable
    // from the redone task branches) and is merged again once they pass.
    const { commit: head } = await quick.headCommit({ worktree });
    await quick.resetHard({ worktree, commit: pre });
    await quick.removeWorktree({ repo: ctx.repo, worktree, copies });
    log(
      `Milestone ${spec.id} reverted to ${pre.slice(0, 10)}; re-delegating ${conflicted.map((c) => c.ref).join(', ')} on top of ${head.slice(0, 10)}`,
    );
    return {
      ok: false,
      usage,
      redelegate: conflicted.map((c) => ({
        ref: c.ref,
        evidence: [],
        rebaseOnto: head,
        note: `Your branch conflicted with the integration branch in ${c.files.join(', ')}; redo the task on top of the integrated state.`,
      })),
    };
  }

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
    label: `${label}-validation`,
    timeoutMs: ctx.settings.checkTimeoutMs,
    passEnv: ctx.settings.passEnv,
    sandbox: ctx.settings.sandbox,
  });
  if (checks.passed) {
    const { commit: head } = await quick.headCommit({ worktree });
    await quick.removeWorktree({ repo: ctx.repo, worktree, copies });
    log(
      `Milestone ${spec.id} integrated at ${head.slice(0, 10)}; merge order ${toMerge.join(', ')}; validation passed`,
    );
    return { ok: true, head, usage };
  }
  await quick.resetHard({ worktree, commit: pre });
  await quick.removeWorktree({ repo: ctx.repo, worktree, copies });
  const failures = checks.results.filter((r) => r.exitCode !== 0 || r.timedOut);
  // Only the tasks the failure points at are redone; the others stay passed and are merged again as they
  // are.
  const suspects = toMerge.map((ref) => {
    const planned = spec.tasks.find((t) => taskRef(spec.id, t.id) === ref)!;
    return {
      ref,
      owns: planned.owns,
      checks: planned.validation.map((v) => v.check),
      changedFiles: state.tasks.find((t) => t.id === ref)!.changedFiles,
    };
  });
  const blame = tasksToRedelegate(
    failures.map((f) => ({ check: f.check, output: f.tail, namedPaths: f.namedPaths })),
    suspects,
  );
  log(
    `Integration: milestone ${spec.id} validation ${failures.map((f) => `'${f.check}'`).join(', ')} failed; reverted to ${pre.slice(0, 10)}; re-delegating ${describeBlame(blame)}`,
  );
  const failed = failures.map((f) => `${f.text} (\`${f.check}\`)`).join('; ');
  const outputs = failures.map(
    (f) =>
      `Output of \`${f.check}\` (${f.timedOut ? 'timed out' : `exit ${f.exitCode}`}), last lines:\n${f.tail}`,
  );
  return {
    ok: false,
    usage,
    redelegate: blame.tasks.map(({ ref, reasons }) => ({
      ref,
      evidence: failures.map((f) => f.outputPath),
      note: `Milestone ${spec.id} validation failed after integration: ${failed}. It points at this task: ${reasons.join('; ')}.`,
      details: outputs,
    })),
  };
}
