/**
 * A milestone's pull request (`delivery: pr`, docs/PROCEDURE.md §13.1): right after the fleet integrates a
 * milestone, its delivery branch is set to the integrated commit and pushed, and its draft PR found or
 * opened (stacked on the previous milestone's, or the one PR of `pr: single`). The activity finds a PR by
 * its head before it creates one, so a retry or `saga continue` after a crash between push and create
 * opens no second PR; the saga keeps the PR's number (a `pullRequest` progress event).
 */
import { getExternalWorkflowHandle } from '@temporalio/workflow';
import type { PullRequestStatus, MilestoneState, Usage } from '../../domain/contract/state';
import { sagaPrBody } from '../../domain/delivery/pr-body';
import { prStack } from '../../domain/delivery/stack';
import { prClosingLine } from '../../domain/tracker/workpad-text';
import type { Plan } from '../../domain/plan';
import { progressSignal } from '../../domain/saga/messages';
import type { SagaContext } from '../../domain/saga/saga-input';
import { forgeActivities } from '../activity-proxies';

export interface MilestonePrInput {
  ctx: SagaContext;
  plan: Plan;
  /** The milestone just integrated. */
  milestone: MilestoneState;
  /** Every integrated milestone's id, in the order they were integrated (this one last). */
  integrated: number[];
  milestones: readonly MilestoneState[];
  /** The PRs the saga opened before (earlier milestones, earlier rounds). */
  known: readonly PullRequestStatus[];
  usage: Usage;
}

/** Opens (or finds) the PR that delivers `milestone` and tells the saga; returns its status. */
export async function openMilestonePr(input: MilestonePrInput): Promise<PullRequestStatus | null> {
  const { ctx, plan, milestone } = input;
  const delivery = ctx.settings.delivery;
  if (!delivery || !milestone.integrationCommit) return null;
  const stack = prStack(ctx, input.integrated, delivery.pr);
  const mine = delivery.pr === 'single' ? stack[0] : stack.find((p) => p.milestone === milestone.id);
  if (!mine) return null;
  const below = input.known.find((p) => p.head === mine.base);
  const pr = await forgeActivities(ctx).deliverMilestone({
    repo: ctx.repo,
    remote: delivery.remote,
    target: delivery.target,
    head: mine.head,
    headSha: milestone.integrationCommit,
    base: mine.base,
    title:
      delivery.pr === 'single'
        ? ctx.goal
        : `${milestone.title} (saga ${ctx.name}, milestone ${milestone.id})`,
    body: sagaPrBody({
      saga: ctx.name,
      goal: ctx.goal,
      plan,
      milestone: mine.milestone,
      milestones: input.milestones,
      exitResults: null,
      defaultAgent: ctx.agent ?? ctx.settings.defaultAgent,
      stackedOn: below?.number ?? null,
      costUsd: input.usage.costUsd ?? null,
      boardUrl: null,
      closes: prClosingLine(
        ctx.source,
        delivery.target,
        mine.milestone === null || input.integrated.length >= plan.milestones.length,
      ),
    }),
  });
  const known = input.known.find((p) => p.number === pr.number);
  const status: PullRequestStatus = {
    milestone: mine.milestone,
    number: pr.number,
    url: pr.htmlUrl,
    head: pr.head,
    base: pr.base,
    headSha: pr.headSha,
    draft: pr.draft,
    state: pr.state,
    ci: known?.ci ?? 'pending',
    failing: known?.failing ?? [],
    ciFixes: known?.ciFixes ?? 0,
    reviewFixes: known?.reviewFixes ?? 0,
    listedComments: known?.listedComments ?? [],
  };
  await getExternalWorkflowHandle(ctx.sagaWorkflowId).signal(progressSignal, {
    type: 'pullRequest',
    pullRequest: status,
  });
  return status;
}
