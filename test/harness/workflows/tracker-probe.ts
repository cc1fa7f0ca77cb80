/**
 * A workflow that runs one tracker activity through the saga's own proxies (trackerActivities in
 * src/workflows/activity-proxies.ts: `writeBack` retries without a limit, `read` for about half an hour) and
 * returns its result or how it failed (retried until given up, or failed at once as non-retryable).
 */
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import { trackerActivities } from '../../../src/workflows/activity-proxies';

export interface TrackerProbeInput {
  queue: string;
  activity: 'writeWorkpad' | 'readTrackerIssue' | 'setIssuePhase';
  input: unknown;
}

export type TrackerProbeResult =
  { ok: true; value: unknown } | { ok: false; retryState: string; type: string | null; message: string };

export async function trackerProbeWorkflow(probe: TrackerProbeInput): Promise<TrackerProbeResult> {
  const { read, writeBack } = trackerActivities(probe.queue);
  const run = (probe.activity === 'readTrackerIssue' ? read.readTrackerIssue : writeBack[probe.activity]) as (
    input: unknown,
  ) => Promise<unknown>;
  try {
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
