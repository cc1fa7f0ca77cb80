/**
 * The delivery watch (`delivery: pr`, docs/PROCEDURE.md §13): a child of the saga that runs while the user
 * decides at acceptance. It updates each PR's body with the final results, then looks at the PRs' CI and
 * review comments on durable timers with backoff (a signed forge webhook to `saga chat serve` wakes it at
 * once), turns a failing check or a reviewer's comment into a fix task on the PR's branch, and returns when
 * the saga tells it the user answered (the fix at hand is landed first).
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { deliveryStopSignal, forgeEventSignal, interactionAnsweredSignal } from '../../domain/saga/messages';
import { recordAnswer } from '../ask';
import { forgeActivities } from '../activity-proxies';
import { DeliveryWatch, LOOKS_PER_RUN, type DeliveryInput, type DeliveryResult } from './delivery-watch';

export type { DeliveryInput, DeliveryResult };

export async function deliveryWorkflow(
  input: DeliveryInput & { bodies?: Record<string, string> },
): Promise<DeliveryResult> {
  const watch = new DeliveryWatch(input);
  // The watch's API: a forge event wakes it, the saga stops it, answers to its questions (CI fix cap) come.
  setHandler(forgeEventSignal, () => {
    watch.woken = true;
  });
  setHandler(deliveryStopSignal, () => {
    watch.stopping = true;
  });
  setHandler(interactionAnsweredSignal, (answer) => recordAnswer(answer));

  if (input.bodies && !input.carried) await updateBodies(input, input.bodies);
  while (!watch.stopping) {
    await watch.look();
    const work = watch.next();
    if (work) {
      await watch.fix(work);
      continue;
    }
    await condition(() => watch.woken || watch.stopping, watch.nextWaitMs());
    // After the wait, not before it: the new run looks as it starts, so no look is made twice or early.
    const long = watch.looksThisRun >= LOOKS_PER_RUN || workflowInfo().continueAsNewSuggested;
    if (long && !watch.stopping) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof deliveryWorkflow>({ ...input, prs: watch.prs, carried: watch.carried() });
    }
  }
  await condition(allHandlersFinished);
  return watch.result();
}

/** Each PR's body with the final validation's results (the saga's part only; people's text stays). */
async function updateBodies(input: DeliveryInput, bodies: Record<string, string>): Promise<void> {
  const { target } = input.ctx.settings.delivery!;
  const forge = forgeActivities(input.ctx);
  for (const pr of input.prs) {
    const body = bodies[String(pr.number)];
    if (pr.state === 'open' && body) await forge.updatePullRequestBody({ target, number: pr.number, body });
  }
}
