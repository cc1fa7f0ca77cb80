/**
 * The delivery watch's state and steps (docs/PROCEDURE.md §13.3): look at the saga's pull requests
 * (durable timers with backoff, or at once when a forge webhook says something changed), run the next fix
 * (a CI failure or a review comment) as a task child on the PR's branch, land it up the stack and push,
 * reply in the review thread. The rules are pure (domain/delivery/watch-rules.ts); this class applies them.
 */
import { condition, executeChild, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { addUsage, noUsage } from '../../domain/agents/usage';
import { isExhausted } from '../../domain/fleet/budget';
import { noChangesBlock, type TaskReport } from '../../domain/fleet/fleet';
import {
  fixTaskBranch,
  fixTaskKey,
  fixTaskWorkflowId,
  integrationBranch,
  worktreePath,
} from '../../domain/contract/naming';
import { SagaName } from '../../domain/contract/search-attributes';
import type { Answer, PullRequestStatus, Usage } from '../../domain/contract/state';
import { fixedReply } from '../../domain/delivery/review-fixes';
import { nextCiPollMs, CI_POLL_SCHEDULE_MS } from '../../domain/delivery/ci-watch';
import {
  applyLook,
  emptyWatchMemory,
  fixTaskSpec,
  nextFix,
  type FixWork,
  type PrWatch,
  type WatchMemory,
  watchOnHead,
} from '../../domain/delivery/watch-rules';
import type { DeliverySettings } from '../../domain/delivery/delivery-config';
import type { PlanTask } from '../../domain/plan';
import { progressBatchSignal } from '../../domain/saga/messages';
import type { SagaContext } from '../../domain/saga/saga-input';
import type { ProgressEvent } from '../../domain/contract/state';
import { forgeActivities } from '../activity-proxies';
import { ask } from '../ask';
import { taskWorkflow, type TaskInput } from '../task/task';

export interface DeliveryInput {
  ctx: SagaContext;
  /** The checks a fix on each PR is judged by, by PR number (fixChecks). */
  fixChecks: Record<string, PlanTask['validation']>;
  round: number;
  /** The saga's PRs, bottom of the stack first. */
  prs: PullRequestStatus[];
  /** The saga budget and what the saga had spent when the watch started (fix tasks count against it). */
  budget: { limitUsd: number | null; spentUsd: number };
  /** What the saga's earlier watches did (the saga keeps it between watches and rounds). */
  memory?: WatchMemory;
  /** Carried over continue-as-new. */
  carried?: { watches: PrWatch[]; memory: WatchMemory; usage: Usage };
}

export interface DeliveryResult {
  prs: PullRequestStatus[];
  /** What the watch's fix tasks spent. */
  usage: Usage;
  memory: WatchMemory;
}

/** Looks between two continue-as-new of a long watch (each look and its timer are a few events). */
export const LOOKS_PER_RUN = 200;

export class DeliveryWatch {
  prs: PullRequestStatus[];
  watches: PrWatch[];
  memory: WatchMemory;
  usage: Usage;
  /** A forge webhook said something changed: look now. */
  woken = false;
  /** The saga's acceptance was answered: return once the fix at hand is landed. */
  stopping = false;
  looksThisRun = 0;
  private readonly delivery: DeliverySettings;
  private readonly forge;

  constructor(readonly input: DeliveryInput) {
    this.delivery = input.ctx.settings.delivery!;
    this.forge = forgeActivities(input.ctx);
    this.prs = input.prs.map((p) => ({ ...p }));
    this.watches =
      input.carried?.watches ??
      input.prs.map((p) => watchOnHead({ number: p.number }, p.headSha, Date.now()));
    this.memory = input.carried?.memory ?? input.memory ?? emptyWatchMemory();
    this.usage = input.carried?.usage ?? noUsage();
  }

  /** One look at every open PR; their status changes go to the saga. */
  async look(): Promise<void> {
    this.woken = false;
    this.looksThisRun++;
    const open = this.prs.filter((p) => p.state === 'open');
    if (!open.length) return;
    const looks = await this.forge.lookAtPullRequests({
      target: this.delivery.target,
      prs: open.map((p) => {
        const w = this.watch(p.number);
        return { number: p.number, headSha: w.headSha, etag: w.etag, commentCount: w.commentCount ?? null };
      }),
    });
    const changed: PullRequestStatus[] = [];
    for (const look of looks) {
      const i = this.prs.findIndex((p) => p.number === look.number);
      if (i === -1) continue;
      const next = applyLook(this.prs[i]!, this.watch(look.number), look, Date.now(), {
        reviewBots: this.delivery.reviewBots,
        memory: this.memory,
      });
      this.setWatch(next.watch);
      if (JSON.stringify(next.pr) !== JSON.stringify(this.prs[i])) changed.push(next.pr);
      this.prs[i] = next.pr;
    }
    await this.tell(changed.map((pr) => ({ type: 'pullRequest' as const, pullRequest: pr })));
  }

  /** How long until the next look: the backoff of the least-watched open PR whose CI is still pending. */
  nextWaitMs(): number {
    const pending = this.prs.filter((p) => p.state === 'open' && p.ci === 'pending');
    if (!pending.length) return CI_POLL_SCHEDULE_MS[CI_POLL_SCHEDULE_MS.length - 1]!;
    return Math.min(...pending.map((p) => nextCiPollMs(this.watch(p.number).looks - 1)));
  }

  next(): FixWork | null {
    return nextFix(this.prs, this.watches, this.memory, {
      ciFixAttempts: this.delivery.ciFixAttempts,
      reviewBots: this.delivery.reviewBots,
    });
  }

  /** Makes one fix: the task child, then the landing and the reply; a fix that fails is logged, not retried. */
  async fix(work: FixWork): Promise<void> {
    if (work.kind === 'ci-cap') return this.askAboutCap(work);
    const at = this.prs.findIndex((p) => p.number === work.pr);
    const pr = this.prs[at]!;
    // Sent once, whatever comes of it: the same failure or comment never starts a second fix task.
    if (work.kind === 'ci') this.memory.seenFailures.push(work.fingerprint);
    else this.memory.handledComments.push(work.comment.id);
    const { limitUsd, spentUsd } = this.input.budget;
    if (isExhausted(limitUsd, spentUsd + (this.usage.costUsd ?? 0))) {
      await this.tell([
        {
          type: 'log',
          line: `PR #${pr.number}: no fix task, the saga budget is spent (${work.request.split('\n')[0]})`,
        },
      ]);
      return;
    }
    this.prs[at] =
      work.kind === 'ci' ? { ...pr, ciFixes: pr.ciFixes + 1 } : { ...pr, reviewFixes: pr.reviewFixes + 1 };
    const report = await this.runFixTask(work, pr);
    this.usage = addUsage(this.usage, report.usage);
    // A fix that changed no file has nothing to push: landing it would reply "addressed" for nothing.
    const blocked =
      report.status === 'passed'
        ? noChangesBlock({ requires_changes: true }, [], report)
        : (report.reason ?? 'no reason given');
    if (blocked !== null) {
      await this.tell([
        { type: 'log', line: `PR #${pr.number}: fix task ${report.ref} blocked: ${blocked}` },
      ]);
      return;
    }
    const landed = await this.forge.landFix({
      repo: this.input.ctx.repo,
      remote: this.delivery.remote,
      target: this.delivery.target,
      fixBranch: report.branch,
      stack: this.prs.map((p) => ({ head: p.head, number: p.number })),
      at,
      integrationBranch: integrationBranch(this.input.ctx.name),
    });
    this.prs = this.prs.map((p) =>
      landed.heads[p.head] ? { ...p, headSha: landed.heads[p.head]!, ci: 'pending', failing: [] } : p,
    );
    // The next look asks about the pushed heads (else it reads the old heads' CI once more, as stale).
    for (const p of this.prs.filter((p) => landed.heads[p.head]))
      this.setWatch(watchOnHead(this.watch(p.number), p.headSha, Date.now()));
    if (work.kind === 'review')
      await this.forge.replyToReview({
        target: this.delivery.target,
        number: pr.number,
        comment: work.comment,
        body: fixedReply(landed.commit),
      });
    await this.tell([
      { type: 'log', line: `PR #${pr.number}: fix ${report.ref} pushed as ${landed.commit.slice(0, 12)}` },
      ...this.prs.map((p) => ({ type: 'pullRequest' as const, pullRequest: p })),
    ]);
  }

  private async runFixTask(
    work: Extract<FixWork, { kind: 'ci' | 'review' }>,
    pr: PullRequestStatus,
  ): Promise<TaskReport> {
    const { ctx } = this.input;
    const n = ++this.memory.fixes;
    const key = fixTaskKey(pr.milestone, n);
    const spec = fixTaskSpec(work, n, this.input.fixChecks[String(pr.number)] ?? []);
    const { limitUsd, spentUsd } = this.input.budget;
    const input: TaskInput = {
      ctx,
      milestone: pr.milestone ?? 0,
      spec,
      ref: key,
      key,
      branch: fixTaskBranch(ctx.name, key),
      worktree: worktreePath(ctx, key),
      base: pr.headSha,
      mergeBranches: [],
      delegation: 1,
      retained: { evidence: [], notes: [] },
      portBase: 30_000 + (n % 500) * ctx.settings.worktree.portRangeSize,
      ...(limitUsd !== null
        ? {
            budget: {
              limitUsd,
              spentElsewhereUsd: spentUsd + (this.usage.costUsd ?? 0),
              onExhausted: ctx.settings.budget.onExhausted,
            },
          }
        : {}),
    };
    await this.tell([{ type: 'log', line: `PR #${pr.number}: fix task ${key} started (${spec.title})` }]);
    return executeChild(taskWorkflow, {
      workflowId: fixTaskWorkflowId(ctx.name, key),
      taskQueue: workflowInfo().taskQueue,
      staticSummary: `${spec.title} on PR #${pr.number}`,
      typedSearchAttributes: [{ key: SagaName, value: ctx.name }],
      args: [input],
    });
  }

  /** A new failure after `ci_fix_attempts` fixes: the user says whether the fleet tries again. */
  private async askAboutCap(work: Extract<FixWork, { kind: 'ci-cap' }>): Promise<void> {
    const pr = this.prs.find((p) => p.number === work.pr)!;
    // The user may answer acceptance first: the watch then stops without this answer (the saga closes the
    // question when the watch has ended).
    let answer: Answer | undefined;
    void ask(this.input.ctx.sagaWorkflowId, {
      id: `ci-pr${pr.number}-q${++this.memory.capQuestions}`,
      kind: 'escalation',
      prompt:
        `PR #${pr.number} (${pr.url}): CI check "${work.check.name}" fails on ${work.sha.slice(0, 12)} after ` +
        `${pr.ciFixes} fix task(s) (ci_fix_attempts). Fix again (one more fix task), or leave it to you?`,
      options: ['fix again', 'leave it'],
      recommended: 1,
    }).then((given) => (answer = given));
    await condition(() => answer !== undefined || this.stopping);
    if (!answer) return;
    if (answer.choice === 'fix again') {
      const key = String(pr.number);
      this.memory.extraCiFixes[key] = (this.memory.extraCiFixes[key] ?? 0) + 1;
    } else this.memory.seenFailures.push(work.fingerprint);
  }

  result(): DeliveryResult {
    return { prs: this.prs, usage: this.usage, memory: this.memory };
  }

  carried(): NonNullable<DeliveryInput['carried']> {
    return { watches: this.watches, memory: this.memory, usage: this.usage };
  }

  private watch(number: number): PrWatch {
    return this.watches.find((w) => w.number === number)!;
  }

  private setWatch(next: PrWatch): void {
    this.watches = this.watches.map((w) => (w.number === next.number ? next : w));
  }

  /** Status changes and log lines to the saga, in one signal. */
  private async tell(events: ProgressEvent[]): Promise<void> {
    if (!events.length) return;
    await getExternalWorkflowHandle(this.input.ctx.sagaWorkflowId).signal(progressBatchSignal, events);
  }
}
