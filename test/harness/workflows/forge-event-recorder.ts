/**
 * A stand-in for a saga in the forge webhook tests: run under the saga's workflow id (`saga-<name>`), it
 * records every `forgeEvent` signal `saga chat serve` sends and answers them to a query, until cancelled.
 */
import { condition, defineQuery, setHandler } from '@temporalio/workflow';
import type { ForgeEvent } from '../../../src/domain/delivery/forge-shapes';
import { forgeEventSignal } from '../../../src/domain/saga/messages';

export const forgeEventsQuery = defineQuery<ForgeEvent[]>('forgeEvents');

export async function forgeEventRecorder(): Promise<void> {
  const events: ForgeEvent[] = [];
  setHandler(forgeEventSignal, (event) => void events.push(event));
  setHandler(forgeEventsQuery, () => events);
  await condition(() => false);
}
