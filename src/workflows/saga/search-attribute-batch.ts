/**
 * Search attribute changes of one workflow task go out as one upsert (each upsert is a history event): a
 * phase change and the question it opens, an answer and the phase it ends.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';

export class SearchAttributeBatch {
  private readonly changes = new Map<string, SearchAttributeUpdatePair>();

  /** Queues a change; the batch is upserted once the current workflow task's code has run. */
  set(change: SearchAttributeUpdatePair): void {
    if (!this.changes.size)
      void Promise.resolve().then(() => {
        upsertSearchAttributes([...this.changes.values()]);
        this.changes.clear();
      });
    this.changes.set(change.key.name, change);
  }
}
