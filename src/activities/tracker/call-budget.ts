/**
 * A per-token call budget in the worker process (docs/PROCEDURE.md §14): every tracker call spends one
 * place of its token's budget, at most N a minute; a call beyond it waits for the next free place (and the
 * activity heartbeats meanwhile), so one busy saga never spends a token's whole rate limit and the
 * tracker's own limit is seldom met at all.
 */
import { asyncLocalStorage } from '@temporalio/activity';
import type { TrackerKind } from '../../domain/config/intake-keys';

/**
 * Calls a minute per token. GitHub allows 5,000 REST calls an hour per token (about 83 a minute) and
 * counts secondary limits on bursts: 60 leaves room for the forge's delivery calls on the same token.
 * Gitea has no limit by default but is often self-hosted on a small machine: 120 is gentle. Linear allows
 * 1,500 requests an hour per API key (25 a minute on average, bursts allowed): 60 with its complexity
 * points is what the SDK's queries leave room for.
 */
export const CALLS_PER_MINUTE: Record<TrackerKind, number> = { github: 60, gitea: 120, linear: 60 };

const WINDOW_MS = 60_000;
/** How often a waiting activity heartbeats (well under any heartbeat timeout the proxies give). */
const HEARTBEAT_EVERY_MS = 5_000;

export interface BudgetClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: BudgetClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class CallBudget {
  /** Per key, the times of the calls made in the last minute (or reserved for calls about to be made). */
  private readonly spent = new Map<string, number[]>();

  constructor(private readonly clock: BudgetClock = realClock) {}

  /** Waits until a call under `key` fits in `perMinute`, then spends it; resolves at the call's time. */
  async take(key: string, perMinute: number, onWait: () => void = heartbeatIfActivity): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      const recent = (this.spent.get(key) ?? []).filter((at) => at > now - WINDOW_MS);
      if (recent.length < perMinute) {
        recent.push(now);
        this.spent.set(key, recent);
        return;
      }
      this.spent.set(key, recent);
      const freeAt = recent[0]! + WINDOW_MS;
      onWait();
      await this.clock.sleep(Math.min(Math.max(1, freeAt - now), HEARTBEAT_EVERY_MS));
    }
  }

  /** Calls spent under `key` in the last minute (for tests and `saga doctor`). */
  spentInLastMinute(key: string): number {
    const now = this.clock.now();
    return (this.spent.get(key) ?? []).filter((at) => at > now - WINDOW_MS).length;
  }
}

function heartbeatIfActivity(): void {
  asyncLocalStorage.getStore()?.heartbeat({ step: 'waiting for the tracker call budget' });
}

/** The worker's budget: one per process, shared by every activity that calls a tracker. */
export const workerCallBudget = new CallBudget();

/** The budget's key for a token: its variable's name and the tracker's API root (never the value). */
export const budgetKey = (connection: { tokenEnv: string; url: string }): string =>
  `${connection.tokenEnv} ${connection.url.replace(/\/+$/, '')}`;
