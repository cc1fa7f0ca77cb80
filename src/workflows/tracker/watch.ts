/**
 * `saga watch` (`saga-watch-<slug>`, docs/PROCEDURE.md §14): a long-running workflow that looks at the
 * tracker every `pollSeconds`, starts one saga per newly labelled issue (at most `maxSagas` running), and
 * continues as new with what it started. `saga watch --stop` signals it to start nothing more and end.
 * State and the look: TrackerWatch (watch-state.ts).
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { watchStatusQuery, watchStopSignal } from '../../domain/saga/messages';
import type { TrackerWatchInput, TrackerWatchStatus } from '../../domain/tracker/issue-sync';
import { TrackerWatch, type WatchCarry } from './watch-state';

/** Looks per run at most: each is a few events plus one per saga started. */
const POLLS_PER_RUN = 50;

export async function trackerWatchWorkflow(
  input: TrackerWatchInput,
  state?: WatchCarry,
): Promise<TrackerWatchStatus> {
  const watch = new TrackerWatch(input, state);
  // The watch's API: `saga watch --stop` and the status `saga list` and `saga watch --status` show.
  setHandler(watchStopSignal, () => {
    watch.stopping = true;
  });
  setHandler(watchStatusQuery, () => watch.status());

  while (!watch.stopping) {
    await watch.poll();
    if (await condition(() => watch.stopping, input.pollSeconds * 1000)) break;
    if (watch.polls >= POLLS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof trackerWatchWorkflow>(input, watch.carried());
    }
  }
  await condition(allHandlersFinished);
  return watch.status();
}
