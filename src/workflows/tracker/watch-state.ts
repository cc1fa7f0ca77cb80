/**
 * The tracker watch's state and its look at the tracker (its workflow, watch.ts, lists the handlers): the
 * issues it started a saga for, those waiting for a free place (`max_sagas`), and the last problem met.
 * An issue's saga has the workflow id its reference makes, started with REJECT_DUPLICATE: a second watch,
 * a restarted one or `saga start --from` of the same issue never makes a second saga.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { sagaWorkflowId } from '../../domain/contract/naming';
import { sagaStartOptions } from '../../domain/saga/saga-start';
import type { TrackerWatchInput, TrackerWatchStatus } from '../../domain/tracker/issue-sync';
import { trackerRefText, type TrackerRef } from '../../domain/tracker/tracker-ref';
import { cappedLine } from '../../domain/text/caps';
import { failureReason } from '../../domain/saga/failure';
import type { sagaWorkflow } from '../saga/saga';
import { intakeSource } from '../../domain/tracker/intake-source';
import { handledBeforeLabel, issueSagaInput } from '../../domain/tracker/watch-saga';
import { temporalActivities, trackerActivities } from '../activity-proxies';

/** Started issues kept in the status: the workflow id, not this list, is what keeps an issue to one saga. */
const STARTED_KEEP = 500;

export type WatchCarry = Pick<TrackerWatchStatus, 'started' | 'lastPollAt' | 'lastError'>;

export class TrackerWatch {
  started: TrackerWatchStatus['started'];
  running: string[] = [];
  waiting: string[] = [];
  lastPollAt: string | null;
  lastError: string | null;
  stopping = false;
  polls = 0;
  private readonly read;
  private readonly temporal;

  constructor(
    readonly input: TrackerWatchInput,
    carry?: WatchCarry,
  ) {
    this.started = carry?.started ?? [];
    this.lastPollAt = carry?.lastPollAt ?? null;
    this.lastError = carry?.lastError ?? null;
    this.read = trackerActivities(input.template.hostQueue).read;
    this.temporal = temporalActivities(input.template.hostQueue);
  }

  status(): TrackerWatchStatus {
    const { scope, label } = this.input;
    return {
      scope: scope.kind === 'linear' ? `linear:${scope.team}` : `${scope.kind}:${scope.owner}/${scope.repo}`,
      label,
      started: this.started,
      running: this.running,
      waiting: this.waiting,
      lastPollAt: this.lastPollAt,
      lastError: this.lastError,
      stopping: this.stopping,
    };
  }

  /** One look: the labelled issues, and a saga started for each new one while places are free. */
  async poll(): Promise<void> {
    const { tracker, scope, label, maxSagas } = this.input;
    this.polls++;
    this.lastPollAt = new Date().toISOString();
    let refs: TrackerRef[];
    try {
      refs = await this.read.listLabelledIssues({ tracker, scope, label });
      const ids = this.started.map((s) => sagaWorkflowId(s.sagaName));
      const running = new Set(await this.temporal.runningSagas({ workflowIds: ids }));
      this.running = this.started
        .filter((s) => running.has(sagaWorkflowId(s.sagaName)))
        .map((s) => s.sagaName);
    } catch (error) {
      this.problem('the tracker', error);
      return;
    }
    const fresh = refs.filter((ref) => !this.started.some((s) => s.ref === trackerRefText(ref)));
    this.waiting = [];
    for (const ref of fresh) {
      if (this.stopping) return;
      if (this.running.length >= maxSagas) this.waiting.push(trackerRefText(ref));
      else await this.start(ref);
    }
  }

  /** The issue's saga, started as `saga start --from` would; one already started is only recorded. */
  private async start(ref: TrackerRef): Promise<void> {
    const text = trackerRefText(ref);
    let input;
    let handledBefore: string | null;
    try {
      const issue = await this.read.readTrackerIssue({ tracker: this.input.tracker, ref });
      input = issueSagaInput(this.input, intakeSource(issue), new Date().toISOString());
      handledBefore = handledBeforeLabel(issue.labels);
    } catch (error) {
      this.problem(text, error);
      return;
    }
    // Marked by an earlier saga: its workflow id may be forgotten (retention), so none is started again.
    if (handledBefore) await this.countIfRunning(input.name);
    else if (!(await this.startSaga(text, input))) return;
    const entry = { ref: text, sagaName: input.name, at: new Date().toISOString() };
    this.started = [...this.started, handledBefore ? { ...entry, handledBefore } : entry].slice(
      -STARTED_KEEP,
    );
  }

  /** Starts the issue's saga; one already started (another watch, by hand) is only counted while it runs. */
  private async startSaga(text: string, input: ReturnType<typeof issueSagaInput>): Promise<boolean> {
    try {
      await startChild<typeof sagaWorkflow>('sagaWorkflow', {
        ...sagaStartOptions(input),
        // The saga is the issue's, not the watch's: it runs on when the watch stops or continues as new.
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      this.running.push(input.name);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) {
        this.problem(text, error);
        return false;
      }
      // Started by another watch or by hand: it takes a place while it runs.
      await this.countIfRunning(input.name);
    }
    return true;
  }

  /** A saga not started here takes a place while it runs (unknown: it does). */
  private async countIfRunning(sagaName: string): Promise<void> {
    const id = sagaWorkflowId(sagaName);
    const running = await this.temporal.runningSagas({ workflowIds: [id] }).catch(() => [id]);
    if (running.includes(id)) this.running.push(sagaName);
  }

  private problem(what: string, error: unknown): void {
    this.lastError = cappedLine(`${this.lastPollAt ?? ''} ${what}: ${failureReason(error)}`);
  }

  carried(): WatchCarry {
    return { started: this.started, lastPollAt: this.lastPollAt, lastError: this.lastError };
  }
}
