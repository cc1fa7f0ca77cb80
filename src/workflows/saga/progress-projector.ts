/**
 * PROGRESS.md is a projection of the saga's state, read through the status query: while a run goes on, one
 * long-running activity writes it whenever the state changed (not an activity per change, so the saga's
 * history stays small); at the end of the saga one last write records its final state.
 */
import { CancellationScope, condition, isCancellation, patched, sleep } from '@temporalio/workflow';
import { projectorActivities, type quickActivities } from '../activity-proxies';
import { PATCHES } from '../patches';

/** Wait before the PROGRESS.md projector is started again after it failed. */
const PROJECTOR_RESTART_MS = 10_000;

export class ProgressProjector {
  private readonly scope = new CancellationScope();

  constructor(
    private readonly quick: ReturnType<typeof quickActivities>,
    private readonly target: { sagaDir: string; workflowId: string },
    private readonly hostQueue: string,
    /** Whether the saga directory exists (nothing is written before). */
    private readonly ready: () => boolean,
  ) {}

  private running: Promise<void> = Promise.resolve();

  /** Starts projecting in the background once the saga directory exists; runs until stopped. */
  start(): void {
    this.running = this.scope.run(() => this.project()).catch(() => undefined);
  }

  /**
   * The run ends or continues as new (the next run has its own projector). Continuing as new closes the run
   * in the same step, so the projector's next heartbeat finds it gone and the SDK drops its report.
   */
  stop(): void {
    this.scope.cancel();
  }

  /**
   * After `stop()`: resolves once the projector activity has confirmed its cancellation (or ended), so a saga
   * that completes leaves none behind to report to a closed run (the SDK's Core logs that as a WARN).
   */
  ended(): Promise<void> {
    return patched(PATCHES.projectorEndsFirst) ? this.running : Promise.resolve();
  }

  /** One write of PROGRESS.md now (the run failed: it shows why). */
  writeOnce(runId: string): Promise<unknown> {
    return this.quick.writeProgressSnapshot({ ...this.target, runId });
  }

  private async project(): Promise<void> {
    await condition(this.ready);
    // Runs before the patch ran the projector on the host queue, in a slot its agents and git steps wait for.
    const projector = patched(PATCHES.projectorQueue) ? projectorActivities(this.hostQueue) : this.quick;
    for (;;) {
      // A projector that ends (its time is up, or its worker died for good) is started again.
      await projector.projectProgress(this.target).catch(async (error) => {
        if (isCancellation(error)) throw error;
        await sleep(PROJECTOR_RESTART_MS);
      });
    }
  }
}
