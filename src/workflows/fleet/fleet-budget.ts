/**
 * The saga budget as the fleet holds it (`budget.saga_usd`, `budget.on_exhausted`; the fleet's `budget`
 * part): what finished and running work has spent, the 80 % warning, the question at the limit, and what
 * running tasks are told. The rules are domain/fleet/budget.ts's; this class applies them. Workflow state
 * (deterministic, no I/O but activities).
 */
import { condition, type ChildWorkflowHandle } from '@temporalio/workflow';
import {
  budgetAnswerLine,
  budgetGrant,
  budgetInteraction,
  budgetQuestionId,
  budgetRaisedLine,
  budgetWarningId,
  budgetWarningText,
  crossedLimit,
  crossedWarning,
  isExhausted,
  raisedLimit,
  remainingUsd,
  stopsRunningTasks,
  type BudgetGrant,
} from '../../domain/fleet/budget';
import type { Answer, Usage } from '../../domain/contract/state';
import { quickActivities } from '../activity-proxies';
import { ask } from '../ask';
import { budgetGrantSignal } from '../../domain/saga/messages';
import type { Fleet } from './fleet';
import type { taskWorkflow } from '../task/task';

export class FleetBudget {
  private limit: number | null;
  private readonly onExhausted;
  /** What running task delegations have reported so far; the saga's truth is finished + these. */
  private readonly runningSpend = new Map<string, Usage>();
  private readonly children = new Map<string, ChildWorkflowHandle<typeof taskWorkflow>>();
  private asked = false;
  private questions = 0;
  /** The user answered the budget question with stop. */
  stopped = false;

  /** What finished work has spent is the fleet state's usage; an answer wakes the fleet through its events. */
  constructor(private readonly fleet: Fleet) {
    this.limit = fleet.ctx.settings.budget.sagaUsd;
    this.onExhausted = fleet.ctx.settings.budget.onExhausted;
  }

  /** The limit now: the configured one, or what the user raised it to. */
  get limitUsd(): number | null {
    return this.limit;
  }

  get limited(): boolean {
    return this.limit !== null;
  }

  spent(): number {
    let total = this.fleet.state.usage.costUsd;
    for (const u of this.runningSpend.values()) total += u.costUsd;
    return total;
  }

  over(): boolean {
    return isExhausted(this.limit, this.spent());
  }

  /** A running task's report of its spend so far. */
  reportRunning(ref: string, usage: Usage): void {
    const before = this.spent();
    this.runningSpend.set(ref, usage);
    this.afterSpend(before);
  }

  /** Forgets a finished delegation's running spend and returns it (a failed child's runs are spent too). */
  settle(ref: string): Usage | undefined {
    const usage = this.runningSpend.get(ref);
    this.runningSpend.delete(ref);
    return usage;
  }

  track(ref: string, handle: ChildWorkflowHandle<typeof taskWorkflow>): void {
    this.children.set(ref, handle);
  }

  untrack(ref: string, workflowId: string): void {
    if (this.children.get(ref)?.workflowId === workflowId) this.children.delete(ref);
  }

  /** The budget as task `ref` sees it: what everything else has spent. */
  grantFor(ref: string, stopNow = false): BudgetGrant {
    const ownRunning = this.runningSpend.get(ref)?.costUsd ?? 0;
    return budgetGrant(this.limit, this.spent(), ownRunning, this.onExhausted, stopNow);
  }

  /** Tells every running task the current budget (so none starts another run past it), or stops them. */
  tellRunningTasks(stopNow: boolean): void {
    for (const [ref, handle] of this.children)
      void handle.signal(budgetGrantSignal, this.grantFor(ref, stopNow)).catch(() => undefined);
  }

  /** After the spend grew from `before`: the 80 % warning once, and at the budget the question (and the stop). */
  afterSpend(before: number): void {
    const { ctx, round, state } = this.fleet;
    const now = this.spent();
    if (crossedWarning(this.limit, before, now)) {
      const text = budgetWarningText(ctx.name, now, this.limit!);
      state.log(text);
      void quickActivities(ctx.hostQueue)
        .notifyNotice({
          saga: ctx.name,
          id: budgetWarningId(round, this.limit!),
          kind: 'budget-warning',
          prompt: text,
        })
        .catch(() => undefined); // the log line records it as well
    }
    if (this.limit === null || now === before) return;
    // Running tasks hear of every spend, so each gates its next run on what the whole saga has spent.
    const crossed = crossedLimit(this.limit, before, now);
    this.tellRunningTasks(stopsRunningTasks(crossed, this.onExhausted));
    if (crossed) this.ask();
  }

  /** The resolver's gate: waits while the budget is spent; 'stop' when the user stopped the saga. */
  async resolverGate(spentByIntegration: number): Promise<number | null | 'stop'> {
    if (this.limit === null) return null;
    const over = () => isExhausted(this.limit, this.spent() + spentByIntegration);
    if (over()) {
      this.ask();
      await condition(() => !over() || this.stopped);
    }
    if (this.stopped) return 'stop';
    return remainingUsd(this.limit, this.spent() + spentByIntegration);
  }

  /** Asks once per crossing whether to raise the saga budget or stop; the answer is applied when it comes. */
  ask(): void {
    if (this.asked) return;
    this.asked = true;
    const { ctx, round, state } = this.fleet;
    const now = this.spent();
    const id = budgetQuestionId(round, now, this.limit!, ++this.questions);
    const question = budgetInteraction(id, now, this.limit!, this.onExhausted);
    void ask(ctx.sagaWorkflowId, question).then(
      (answer) => {
        this.apply(answer);
        // Applied here; the fleet loop wakes on it.
        state.events.push({ type: 'budget', answer });
      },
      () => undefined,
    );
  }

  /** A raise or a stop. */
  private apply(answer: Answer): void {
    this.asked = false;
    const { state } = this.fleet;
    state.log(budgetAnswerLine(answer));
    if (answer.choice === 'stop') {
      this.stopped = true;
      return;
    }
    try {
      this.limit = raisedLimit(answer.text ?? '', this.limit!);
    } catch {
      return; // refused by the respond validator; an answer from before it changes nothing
    }
    state.log(budgetRaisedLine(this.limit));
    this.tellRunningTasks(false);
    if (this.over()) this.ask();
  }
}
