/**
 * The workflows of intake from a tracker, their inputs and messages (docs/PROCEDURE.md §14):
 * - `issueSyncWorkflow` (`saga-<name>-issue`): a saga's write-back to its issue (workpad, labels) and, with
 *   `intake.questions: issue`, its questions posted there and the replies of writers answered through the
 *   saga's respond Update. Started by the saga once its settings are loaded; it outlives the saga's runs
 *   (continue-as-new) and ends after writing the saga's end. A tracker that is down delays it, never the saga.
 * - `trackerWatchWorkflow` (`saga-watch-<slug>`, `saga watch`): polls the tracker and starts one saga per
 *   newly labelled issue; the saga's workflow id comes from the issue's reference, so an issue is started
 *   once however often the watch restarts.
 */
import { z } from 'zod';
import { IntakeSourceSchema, TrackerConnectionSchema } from './issue';
import { TrackerScopeSchema } from './tracker-ref';

export const IssueSyncInputSchema = z.object({
  sagaName: z.string(),
  sagaWorkflowId: z.string(),
  hostQueue: z.string(),
  source: IntakeSourceSchema,
  tracker: TrackerConnectionSchema,
  questions: z.enum(['cli', 'issue']),
});
export type IssueSyncInput = z.infer<typeof IssueSyncInputSchema>;

export const issueSyncWorkflowId = (sagaName: string): string => `saga-${sagaName}-issue`;

export const TrackerWatchInputSchema = z.object({
  scope: TrackerScopeSchema,
  label: z.string().min(1),
  tracker: TrackerConnectionSchema,
  maxSagas: z.number().int().positive(),
  pollSeconds: z.number().int().positive(),
  /** The `saga start` arguments every saga of this watch gets (flags only; the goal is the issue's). */
  argumentsText: z.string(),
  /**
   * The parts of a SagaInput that are the same for every saga of the watch, checked by `saga watch` as
   * `saga start` checks them (repo, base, config, agent, saga home, host).
   */
  template: z.object({
    repo: z.string(),
    base: z.string(),
    agent: z.string().nullable(),
    configFile: z.string().nullable(),
    trustRepoConfig: z.boolean(),
    deliver: z.boolean(),
    unconfined: z.array(z.string()),
    sagaHome: z.string(),
    worktreeRoot: z.string(),
    hostId: z.string(),
    hostQueue: z.string(),
    /**
     * The flag defaults of the repository's `.sage/config.yaml` (`saga start` reads them; the watch cannot
     * read files), read once by `saga watch`. Absent: none.
     */
    flagDefaults: z.record(z.boolean()).optional(),
  }),
});
export type TrackerWatchInput = z.infer<typeof TrackerWatchInputSchema>;

export const TrackerWatchStatusSchema = z.object({
  scope: z.string(),
  label: z.string(),
  started: z.array(
    z.object({
      ref: z.string(),
      sagaName: z.string(),
      at: z.string(),
      /** The `saga:<phase>` label that showed an earlier saga handled the issue: none was started. */
      handledBefore: z.string().optional(),
    }),
  ),
  running: z.array(z.string()),
  /** Issues seen but waiting for a free place (max_sagas). */
  waiting: z.array(z.string()),
  lastPollAt: z.string().nullable(),
  lastError: z.string().nullable(),
  stopping: z.boolean(),
});
export type TrackerWatchStatus = z.infer<typeof TrackerWatchStatusSchema>;
