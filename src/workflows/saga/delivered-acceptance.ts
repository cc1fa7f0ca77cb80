/**
 * Acceptance of a saga delivered as pull requests (`delivery: pr`, docs/PROCEDURE.md §13.4): the delivery
 * watch runs while the user decides (CI failures and review comments become fix tasks), the prompt shows
 * each PR with its CI and review state, and the answer decides: `accept` leaves the PRs open, `merge`
 * merges them in order through the forge (never without the user's answer, unless `auto_merge: true` makes
 * `accept` merge too), `mark ready` takes them out of draft and asks again, `report issues` starts a round.
 */
import { getExternalWorkflowHandle, startChild, type ChildWorkflowHandle } from '@temporalio/workflow';
import { ACCEPTANCE_CHOICE } from '../../domain/contract/answer-choices';
import { phaseWorkflowId } from '../../domain/contract/naming';
import { SagaName } from '../../domain/contract/search-attributes';
import type { PullRequestStatus } from '../../domain/contract/state';
import { pullRequestStatusLines } from '../../domain/record/pull-requests';
import { fixChecks } from '../../domain/delivery/watch-rules';
import { sagaPrBody } from '../../domain/delivery/pr-body';
import { prClosingLine } from '../../domain/tracker/workpad-text';
import type { ForgeEvent } from '../../domain/delivery/forge-shapes';
import { deliveryStopSignal, forgeEventSignal } from '../../domain/saga/messages';
import { forgeActivities } from '../activity-proxies';
import { deliveryWorkflow } from '../delivery/delivery';
import type { AcceptanceResult } from './acceptance';
import { accept, type Reported } from './saga-report';
import type { SagaRun } from './saga-run';
import type { ValidationResult } from './validation';

/** Whether this round ends with pull requests (`delivery: pr` and at least one PR opened). */
export const delivering = (run: SagaRun): boolean =>
  !!run.saga?.ctx.settings.delivery && !!run.progress.pullRequests?.length;

export async function acceptDelivered(
  run: SagaRun,
  validation: ValidationResult,
  reported: Reported,
): Promise<AcceptanceResult> {
  const { ctx } = run.saga!;
  const delivery = ctx.settings.delivery!;
  const forge = forgeActivities(ctx);
  let note: string | undefined;
  for (let asked = 1; ; asked++) {
    const watch = await startWatch(run, asked === 1);
    let acceptance = await accept(run, validation, reported, {
      prLines: prLines(run),
      ask: asked,
      ...(note ? { note } : {}),
    });
    while (acceptance.accepted && acceptance.choice === ACCEPTANCE_CHOICE.markReady) {
      const ready = await forge.markReady({
        target: delivery.target,
        numbers: open(run).map((p) => p.number),
      });
      ready.forEach((pr) => update(run, { number: pr.number, draft: pr.draft }));
      run.addLog(`Pull requests marked ready for review by ${acceptance.by}`);
      acceptance = await accept(run, validation, reported, {
        prLines: prLines(run),
        ask: ++asked,
      });
    }
    await stopWatch(run, watch);
    const merge =
      acceptance.accepted &&
      (acceptance.choice === ACCEPTANCE_CHOICE.merge || (delivery.autoMerge && !acceptance.fastForward));
    if (!merge) return acceptance;
    // A draft cannot be merged (GitHub and Gitea refuse it): merging is the user's word that they are ready.
    const drafts = open(run).filter((p) => p.draft);
    if (drafts.length) {
      const ready = await forge.markReady({ target: delivery.target, numbers: drafts.map((p) => p.number) });
      ready.forEach((pr) => update(run, { number: pr.number, draft: pr.draft }));
    }
    const merged = await forge.mergePullRequests({
      target: delivery.target,
      prs: open(run).map((p) => ({ number: p.number, base: p.base, headSha: p.headSha })),
      baseBranch: ctx.base,
      method: delivery.mergeMethod,
    });
    merged.merged.forEach((number) => update(run, { number, state: 'merged' }));
    if (merged.merged.length)
      run.addLog(`Merged ${merged.merged.map((n) => `#${n}`).join(', ')} into ${ctx.base}`);
    if (!merged.refused) return acceptance;
    note = `The forge refused to merge #${merged.refused.number}: ${merged.refused.message}`;
    run.addLog(note);
  }
}

/** Passes a forge event on to the round's delivery watch, if one runs (else there is nothing to wake). */
export function wakeDeliveryWatch(run: SagaRun, event: ForgeEvent): void {
  if (!delivering(run) || run.phase !== 'acceptance') return;
  const watch = phaseWorkflowId(run.input.name, 'delivery', run.round);
  void getExternalWorkflowHandle(watch)
    .signal(forgeEventSignal, event)
    .catch(() => undefined); // between two asks no watch runs: the next one looks first anyway
}

const prs = (run: SagaRun): PullRequestStatus[] => run.progress.pullRequests ?? [];
/** The PRs as `saga status` shows them (one wording everywhere), without its heading. */
const prLines = (run: SagaRun): string[] => pullRequestStatusLines(prs(run)).slice(1);
const open = (run: SagaRun): PullRequestStatus[] => prs(run).filter((p) => p.state === 'open');

function update(run: SagaRun, change: Partial<PullRequestStatus> & { number: number }): void {
  const pr = prs(run).find((p) => p.number === change.number);
  if (pr) run.applyProgress({ type: 'pullRequest', pullRequest: { ...pr, ...change } });
}

/** The watch for this ask; the first of a round also writes the final results into each PR's body. */
async function startWatch(
  run: SagaRun,
  first: boolean,
): Promise<ChildWorkflowHandle<typeof deliveryWorkflow>> {
  const { ctx, plan } = run.saga!;
  const spent = run.progress.usage.costUsd ?? 0;
  return startChild(deliveryWorkflow, {
    workflowId: phaseWorkflowId(ctx.name, 'delivery', run.round),
    staticSummary: `Delivery watch, round ${run.round}`,
    typedSearchAttributes: [{ key: SagaName, value: ctx.name }],
    args: [
      {
        ctx,
        fixChecks: fixChecks(plan, open(run)),
        round: run.round,
        prs: open(run),
        budget: { limitUsd: ctx.settings.budget.sagaUsd, spentUsd: spent },
        ...(run.deliveryMemory ? { memory: run.deliveryMemory } : {}),
        ...(first ? { bodies: bodies(run) } : {}),
      },
    ],
  });
}

async function stopWatch(run: SagaRun, watch: ChildWorkflowHandle<typeof deliveryWorkflow>): Promise<void> {
  await watch.signal(deliveryStopSignal);
  const result = await watch.result();
  // A question the watch asked and the user left open (the CI fix cap) goes with it.
  run.hub.closeOwnedBy(watch.workflowId);
  run.addUsage(result.usage);
  run.deliveryMemory = result.memory;
  result.prs.forEach((pr) => run.applyProgress({ type: 'pullRequest', pullRequest: pr }));
}

/** Each open PR's body with the final validation's results, by PR number. */
function bodies(run: SagaRun): Record<string, string> {
  const { ctx, plan } = run.saga!;
  const all = prs(run);
  return Object.fromEntries(
    open(run).map((pr) => [
      String(pr.number),
      sagaPrBody({
        saga: ctx.name,
        goal: ctx.goal,
        plan,
        milestone: pr.milestone,
        milestones: run.progress.milestones,
        exitResults: run.exitResults,
        defaultAgent: ctx.agent ?? ctx.settings.defaultAgent,
        stackedOn: all.find((p) => p.head === pr.base)?.number ?? null,
        costUsd: run.progress.usage.costUsd ?? null,
        boardUrl: null,
        // The top of the stack (no PR on it) or the one PR lands the whole saga.
        closes: prClosingLine(
          ctx.source,
          ctx.settings.delivery?.target,
          pr.milestone === null || !all.some((p) => p.base === pr.head),
        ),
      }),
    ]),
  );
}
