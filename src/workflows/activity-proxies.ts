/** Activity stubs, routed to the task queue of the host that holds the saga's repo. */
import {
  ActivityCancellationType,
  proxyActivities,
  type ActivityFunctionWithOptions,
  type ActivityInterfaceFor,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { SagaActivities } from '../activities';
import type { ForgeActivities } from '../activities/forge/delivery-activities';
import type { TrackerActivities } from '../activities/tracker/tracker-activities';
import { DEFAULT_HEARTBEAT_TIMEOUT } from '../domain/config/config';
import { parseDuration } from '../domain/config/units';
import { projectorTaskQueue } from '../domain/contract/naming';
import type { SagaContext } from '../domain/saga/saga-input';

type Stubs = ActivityInterfaceFor<SagaActivities>;
type Stub = ActivityFunctionWithOptions<(...args: unknown[]) => Promise<unknown>>;

/**
 * A one-line summary of an activity call for the Web UI's event history (which agent, what task, which
 * attempt); undefined for calls whose type name says enough.
 */
export function activitySummary(activity: string, input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const field = (key: string): string | undefined => {
    const value = (input as Record<string, unknown>)[key];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  };
  const taskId = field('taskId');
  switch (activity) {
    case 'runAgent':
    case 'runRoleAgent':
    case 'runReviewer':
      return [
        `${field('role') ?? 'reviewer'} (${field('stage') ?? '?'})`,
        ...(taskId ? [`task ${taskId}`] : []),
        ...(field('attempt') ? [`attempt ${field('attempt')}`] : []),
      ].join(', ');
    case 'runChecks': {
      const checks = (input as { checks?: unknown[] }).checks?.length ?? 0;
      return `${checks} check${checks === 1 ? '' : 's'}: ${field('label') ?? ''}`;
    }
    case 'runTaskAttempt': {
      const { agent, prepare } = input as { agent?: unknown; prepare?: unknown };
      const steps = [
        ...(prepare ? ['worktree'] : []),
        activitySummary('runRoleAgent', agent) ?? 'agent',
        'checks',
      ];
      return steps.join(' → ');
    }
    case 'prepareWorktree':
    case 'prepareTaskWorktree':
      return `Worktree ${field('worktree') ?? ''} on ${field('branch') ?? ''}`;
    case 'setUpWorktree':
      return `Set-up of ${field('worktree') ?? ''} on ${field('branch') ?? ''}`;
    default:
      return undefined;
  }
}

/** Every call goes out with its summary (per-call options via the SDK's executeWithOptions). */
function withSummaries(stubs: Stubs): Stubs {
  return new Proxy(stubs, {
    get(target, name) {
      if (typeof name !== 'string') return undefined;
      const stub = Reflect.get(target, name) as Stub;
      const call = (...args: unknown[]) => {
        const summary = activitySummary(name, args[0])?.slice(0, 200);
        return summary ? stub.executeWithOptions({ summary }, args) : stub(...args);
      };
      return Object.assign(call, { executeWithOptions: stub.executeWithOptions });
    },
  });
}

const retry: RetryPolicy = { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 };

/**
 * Start-to-close of quick activities: sized for git work (worktree add/remove, merges), whose commands may
 * each take up to the git timeout (10 m by default) in a big repo. Git heartbeats while it runs, so the 1 m
 * heartbeat timeout only notices a dead worker; and git's process timeout is capped below this deadline, so
 * a retry never runs beside a git command still at work in the same worktree.
 */
export const QUICK_START_TO_CLOSE = '30m';

/** Quick I/O: git plumbing, artifacts, config. */
export function quickActivities(hostQueue: string) {
  return proxyActivities<SagaActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: QUICK_START_TO_CLOSE,
    heartbeatTimeout: '1m',
    retry,
  });
}

/** The saga's PROGRESS.md projector, on its host's projector queue (see projectorTaskQueue). */
export function projectorActivities(hostQueue: string) {
  return proxyActivities<SagaActivities>({
    taskQueue: projectorTaskQueue(hostQueue),
    startToCloseTimeout: QUICK_START_TO_CLOSE,
    heartbeatTimeout: '1m',
    retry,
    // The saga's end can wait for the projector to be gone (ProgressProjector.ended): a projector still
    // running when its run completes reports to a closed run, which the SDK's Core logs as a WARN.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}

/**
 * Long runs (agents, checks, discovery, worktree set-up): heartbeats notice a dead worker within the
 * heartbeat timeout (saga.config.yaml `heartbeat_timeout`, default 30 s); agents, checks and setup
 * heartbeat from their process runner, git commands from execGit while they run. The start-to-close
 * backstop is the longest agent timeout plus a margin.
 */
export function longActivities(
  hostQueue: string,
  maxRunMs: number,
  heartbeatTimeoutMs = parseDuration(DEFAULT_HEARTBEAT_TIMEOUT),
) {
  const stubs = proxyActivities<SagaActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: maxRunMs + 5 * 60_000,
    heartbeatTimeout: heartbeatTimeoutMs,
    // On cancellation wait until the agent's process tree is really gone, so the durable handoff never
    // commits or removes a worktree under a running agent.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Agents report their own failures in the result; only infrastructure fails an attempt (a worker
    // crash or shutdown), so allow several before giving up.
    retry: { ...retry, maximumAttempts: 10 },
  });
  return withSummaries(stubs);
}

/** Agents' longest run (their configured timeouts, at least a minute): the backstop of long activities. */
export const maxAgentTimeout = (ctx: SagaContext): number =>
  Math.max(60_000, ...Object.values(ctx.settings.agentTimeoutMs));

/**
 * The activity stubs of a saga's workflows, in one place so every one honours the saga's settings
 * (`heartbeat_timeout`). `longestRunMs`: the longest run a long activity may take (default: the longest
 * agent timeout).
 */
export function activitiesFor(ctx: SagaContext, longestRunMs = maxAgentTimeout(ctx)) {
  return {
    quick: quickActivities(ctx.hostQueue),
    long: longActivities(ctx.hostQueue, longestRunMs, ctx.settings.heartbeatTimeoutMs),
  };
}

/**
 * The forge calls of delivery (`delivery: pr`), on the host that holds the repository (pushes use its git).
 * A forge that is down or rate-limits is waited for (retries up to about half an hour), never a failed saga;
 * what the forge refuses (401, 403, 404, 422) fails at once with its reason (non-retryable).
 */
export function forgeActivities(ctx: Pick<SagaContext, 'hostQueue' | 'settings'>) {
  return proxyActivities<ForgeActivities>({
    taskQueue: ctx.hostQueue,
    startToCloseTimeout: '10m',
    // The activities heartbeat while a push or a forge call is under way: a dead worker is noticed soon.
    heartbeatTimeout: ctx.settings.heartbeatTimeoutMs,
    retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 12 },
  });
}

/**
 * The tracker calls of intake (docs/PROCEDURE.md §14), on the host's queue. `read` (the issue, the watch's
 * poll, the replies) waits out a tracker that is down for about half an hour, then fails the call;
 * `writeBack` (workpad, phase label, questions) never gives up, so a tracker that is down delays the
 * write-back and never fails the saga. A 429/503 retry waits what the tracker asked (Retry-After, up to
 * 10 minutes); what the tracker refuses (401, 403, 404, 422, a token not set) fails at once.
 */
export function trackerActivities(hostQueue: string) {
  const read = proxyActivities<TrackerActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: '2m',
    heartbeatTimeout: '1m',
    // 5 s doubling to 5 min: 12 attempts span about 32 minutes.
    retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 12 },
  });
  const writeBack = proxyActivities<TrackerActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: '2m',
    heartbeatTimeout: '1m',
    // No maximumAttempts: unlimited (the SDK refuses 0).
    retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10m' },
  });
  return {
    read: {
      readTrackerIssue: read.readTrackerIssue,
      listLabelledIssues: read.listLabelledIssues,
      readIssueReplies: read.readIssueReplies,
    },
    writeBack: {
      writeWorkpad: writeBack.writeWorkpad,
      setIssuePhase: writeBack.setIssuePhase,
      postIssueComment: writeBack.postIssueComment,
    },
  };
}

/**
 * What the tracker workflows ask of Temporal itself (src/activities/tracker/saga-answers.ts: an answer
 * through the saga's respond Update, which sagas still run): quick, retried a few times.
 */
export const temporalActivities = (hostQueue: string) =>
  proxyActivities<SagaActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: '1m',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
  });
