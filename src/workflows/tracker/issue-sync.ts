/**
 * The saga's issue sync (`saga-<name>-issue`, docs/PROCEDURE.md §14): a child the saga starts once its
 * settings are loaded, abandoned when the saga's run ends so that it outlives continue-as-new. It writes
 * the workpad and the phase label when the saga sends an update, and with `intake.questions: issue` posts
 * the saga's questions and answers them from writers' replies. It ends after writing the saga's end.
 * State and steps: IssueSync (issue-sync-state.ts).
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { issueQuestionsSignal, workpadSignal } from '../../domain/saga/messages';
import type { IssueSyncInput } from '../../domain/tracker/issue-sync';
import { IssueSync, type IssueSyncCarry } from './issue-sync-state';

/** Steps per run at most: each is a few events, so a saga waiting weeks on an answer keeps a small history. */
const STEPS_PER_RUN = 500;

export async function issueSyncWorkflow(input: IssueSyncInput, state?: IssueSyncCarry): Promise<void> {
  const sync = new IssueSync(input, state);
  // The sync's API: the saga's (and fleet's) workpad updates and the saga's pending questions.
  setHandler(workpadSignal, (update) => sync.update(update));
  setHandler(issueQuestionsSignal, (pending) => sync.setQuestions(pending));

  for (let steps = 0; !sync.ended; steps++) {
    if (steps >= STEPS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof issueSyncWorkflow>(input, sync.carried());
    }
    if (sync.dirty) await sync.write();
    else if (sync.hasUnposted()) await sync.postQuestions();
    else if (sync.pollDue())
      // A tracker down longer than the read's retries: the next look tries again (from the same reply).
      await sync.readReplies().catch((error: unknown) => {
        sync.lookedAfterFailure();
        log.warn('Could not read the replies on the issue', { error: String(error) });
      });
    else {
      const wait = sync.pollWaitMs();
      const woken = () => sync.dirty || sync.hasUnposted();
      if (wait === Infinity) await condition(woken);
      else await condition(woken, wait);
    }
  }
  await condition(allHandlersFinished);
}
