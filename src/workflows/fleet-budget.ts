/**
 * The saga budget as the fleet holds it (`budget.saga_usd`, `budget.on_exhausted`): what finished and
 * running work has spent, the 80 % warning, the question at the limit, and what running tasks are told.
 * Lives in the implementation workflow; its state is workflow state (deterministic, no I/O but activities).
 */
import { condition, type ChildWorkflowHandle } from '@temporalio/workflow';
import {
  budgetInteraction,
  budgetWarningText,
  crossedWarning,
  raisedLimit,
  remainingUsd,
  type BudgetGrant,
} from '../domain/fleet/budget';
import type { SagaContext } from '../domain/saga/saga-input';
import type { Answer, Usage } from '../domain/contract/state';
import { quickActivities } from './activity-proxies';
import { ask } from './ask';
import { budgetGrantSignal } from '../domain/saga/messages';
import type { taskWorkflow } from './task';

interface FleetBudgetDeps {
  ctx: SagaContext;
  round: number;
  /** What finished work has spent (the implementation's running usage total). */
  finishedUsd: () => number;
  log: (line: string) => void;
  /** An answer to the budget question arrived (already applied here); the fleet loop wakes on it. */
  answered: (answer: Answer) => void;
}

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

  constructor(private readonly deps: FleetBudgetDeps) {
    this.limit = deps.ctx.settings.budget.sagaUsd;
    this.onExhausted = deps.ctx.settings.budget.onExhausted;
  }

  /** The limit now: the configured one, or what the user raised it to. */
  get limitUsd(): number | null {
    return this.limit;
  }

  get limited(): boolean {
    return this.limit !== null;
  }

  spent(): number {
    let total = this.deps.finishedUsd();
    for (const u of this.runningSpend.values()) total += u.costUsd;
    return total;
  }

  over(): boolean {
    return this.limit !== null && this.spent() >= this.limit;
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
    return {
      limitUsd: this.limit,
      spentElsewhereUsd: this.spent() - (this.runningSpend.get(ref)?.costUsd ?? 0),
      onExhausted: this.onExhausted,
      ...(stopNow ? { stopNow } : {}),
    };
  }

  /** Tells every running task the current budget (so none starts another run past it), or stops them. */
  tellRunningTasks(stopNow: boolean): void {
    for (const [ref, handle] of this.children)
      void handle.signal(budgetGrantSignal, this.grantFor(ref, stopNow)).catch(() => undefined);
  }

  /** After the spend grew from `before`: the 80 % warning once, and at the budget the question (and the stop). */
  afterSpend(before: number): void {
    const { ctx, round, log } = this.deps;
    const now = this.spent();
    if (crossedWarning(this.limit, before, now)) {
      const text = budgetWarningText(ctx.name, now, this.limit!);
      log(text);
      void quickActivities(ctx.hostQueue)
        .notifyNotice({
          saga: ctx.name,
          id: `budget-warning-r${round}-${Math.round(this.limit! * 100)}`,
          kind: 'budget-warning',
          prompt: text,
        })
        .catch(() => undefined); // the log line records it as well
    }
    if (this.limit === null || now === before) return;
    // Running tasks hear of every spend, so each gates its next run on what the whole saga has spent.
    const crossed = this.over() && before < this.limit;
    this.tellRunningTasks(crossed && this.onExhausted === 'stop');
    if (crossed) this.ask();
  }

  /** The resolver's gate: waits while the budget is spent; 'stop' when the user stopped the saga. */
  async resolverGate(spentByIntegration: number): Promise<number | null | 'stop'> {
    if (this.limit === null) return null;
    const over = () => this.limit !== null && this.spent() + spentByIntegration >= this.limit;
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
    const now = this.spent();
    // Each question its own id: a raise that is still not enough asks again.
    const id = `budget-r${this.deps.round}-${Math.round(now * 100)}-of-${Math.round(this.limit! * 100)}`;
    const question = budgetInteraction(`${id}-q${++this.questions}`, now, this.limit!, this.onExhausted);
    void ask(this.deps.ctx.sagaWorkflowId, question).then(
      (answer) => {
        this.apply(answer);
        this.deps.answered(answer);
      },
      () => undefined,
    );
  }

  /** A raise or a stop. */
  private apply(answer: Answer): void {
    this.asked = false;
    this.deps.log(
      `Budget question answered by ${answer.user}: ${answer.choice}${answer.text ? ` ${answer.text}` : ''}`,
    );
    if (answer.choice === 'stop') {
      this.stopped = true;
      return;
    }
    try {
      this.limit = raisedLimit(answer.text ?? '', this.limit!);
    } catch {
      return; // refused by the respond validator; an answer from before it changes nothing
    }
    this.deps.log(`Saga budget is now $${this.limit}`);
    this.tellRunningTasks(false);
    if (this.over()) this.ask();
  }
}
