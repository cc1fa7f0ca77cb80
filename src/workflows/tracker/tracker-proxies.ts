/**
 * The activity stubs of the tracker workflows (docs/PROCEDURE.md §14), on the host's queue:
 * - `read`: reading the issue, the labelled issues and the replies; a tracker down for about half an hour
 *   fails the call, which the workflow records and retries at its next look.
 * - `writeBack`: the workpad, the phase label and the saga's comments; retried without a limit, so a
 *   tracker that is down delays the write-back and never fails it (nor the saga, which only signals).
 * - `temporal`: answering the saga through its respond Update, and which sagas still run.
 * STOPGAP for the first two: the tracker activities' own proxies (`trackerActivities` in
 * activity-proxies.ts, same name and shape) replace them at merge.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { SagaActivities } from '../../activities';

export function trackerActivities(hostQueue: string) {
  return {
    read: proxyActivities<SagaActivities>({
      taskQueue: hostQueue,
      startToCloseTimeout: '2m',
      retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 10 },
    }),
    writeBack: proxyActivities<SagaActivities>({
      taskQueue: hostQueue,
      startToCloseTimeout: '2m',
      retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10m' },
    }),
  };
}

/** The calls to Temporal itself (saga-answers.ts): quick, retried a few times. */
export const temporalActivities = (hostQueue: string) =>
  proxyActivities<SagaActivities>({
    taskQueue: hostQueue,
    startToCloseTimeout: '1m',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
  });
