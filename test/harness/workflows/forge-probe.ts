/**
 * A workflow that runs one forge activity (src/activities/forge/delivery-activities.ts) on a host queue with
 * a short retry policy and returns its result or how it failed: what Temporal made of the activity's
 * failure (retried until the attempts ran out, or failed at once as non-retryable) and the failure's type.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ForgeActivities } from '../../../src/activities/forge/delivery-activities';

export interface ForgeProbeInput {
  queue: string;
  /** How many attempts Temporal makes before it gives up. */
  maximumAttempts: number;
  activity: 'lookAtPullRequests' | 'markReady';
  input: unknown;
}

export type ForgeProbeResult =
  { ok: true; value: unknown } | { ok: false; retryState: string; type: string | null; message: string };

export async function forgeProbeWorkflow(probe: ForgeProbeInput): Promise<ForgeProbeResult> {
  const acts = proxyActivities<ForgeActivities>({
    taskQueue: probe.queue,
    startToCloseTimeout: '30s',
    retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: probe.maximumAttempts },
  });
  try {
    const run = acts[probe.activity] as (input: unknown) => Promise<unknown>;
    return { ok: true, value: await run(probe.input) };
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const cause = error.cause;
    return {
      ok: false,
      retryState: error.retryState ?? 'unknown',
      type: cause instanceof ApplicationFailure ? (cause.type ?? null) : null,
      message: cause?.message ?? error.message,
    };
  }
}
