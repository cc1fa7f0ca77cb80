/** Activity stubs, routed to the task queue of the host that holds the saga's repo. */
import { proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { SagaActivities } from '../activities';

const retry: RetryPolicy = { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 };

/** Quick I/O: git plumbing, artifacts, config. */
export function quickActivities(hostQueue: string) {
  return proxyActivities<SagaActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: '5m',
    heartbeatTimeout: '1m',
    retry,
  });
}

/**
 * Long runs (agents, checks, discovery, worktree set-up): heartbeats notice a dead worker within 30 s;
 * the start-to-close backstop is the longest agent timeout plus a margin.
 */
export function longActivities(hostQueue: string, maxRunMs: number) {
  return proxyActivities<SagaActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: maxRunMs + 5 * 60_000,
    heartbeatTimeout: '30s',
    retry: { ...retry, maximumAttempts: 3 },
  });
}
