/**
 * What the bench reads from workflow histories: event counts, payload sizes, when the implementation
 * workflow saw each task child start and report, and when a reader could first see a task's change (the
 * server's own timestamps).
 */
import type { temporal } from '@temporalio/proto';
import { METADATA_STORED_BYTES, payloadBytes } from '../src/codec/payload-store';
import { parseTaskRef } from '../src/domain/contract/naming';
import type { AgentRecord } from './timed-agent';

type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;

export function eventMs(event: Event): number {
  const t = event.eventTime;
  if (!t) throw new Error(`History event ${String(event.eventId)} has no time.`);
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

export const eventCount = (history: History): number => history.events?.length ?? 0;

/** Bytes of the largest payload (data plus metadata) anywhere in the history. */
export const largestPayload = (history: History): number => largestPayloads(history).stored;

/**
 * The largest payload in the history as the server holds it (`stored`), and the largest before the payload
 * store replaced it with a reference (`logical`: the size its reference records).
 */
export function largestPayloads(history: History): { stored: number; logical: number } {
  const largest = { stored: 0, logical: 0 };
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    if (value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    if (record.data instanceof Uint8Array && typeof record.metadata === 'object') {
      const metadata = (record.metadata ?? {}) as Record<string, Uint8Array>;
      const size = payloadBytes({ data: record.data, metadata });
      const storedBytes = metadata[METADATA_STORED_BYTES];
      const logical = storedBytes ? Number(Buffer.from(storedBytes).toString('utf8')) : size;
      largest.stored = Math.max(largest.stored, size);
      largest.logical = Math.max(largest.logical, logical);
      return;
    }
    for (const child of Object.values(record)) visit(child);
  };
  for (const event of history.events ?? []) visit(event);
  return largest;
}

export interface ChildTiming {
  ref: string;
  workflowId: string;
  initiatedAt: number;
  completedAt: number;
}

export interface ImplementationTimings {
  startedAt: number;
  closedAt: number;
  children: ChildTiming[];
}

/** `saga-<name>-m1t3` (or `-d2`) → "1.3". */
function refOf(workflowId: string): string {
  const match = /-m(\d+)t(\d+)(?:-d\d+)?$/.exec(workflowId);
  if (!match) throw new Error(`Not a task workflow id: ${workflowId}`);
  const ref = `${match[1]}.${match[2]}`;
  if (!parseTaskRef(ref)) throw new Error(`Not a task ref: ${ref}`);
  return ref;
}

/** When the implementation workflow started, closed, and initiated and heard back from each task child. */
export function implementationTimings(history: History): ImplementationTimings {
  const events = history.events ?? [];
  const initiated = new Map<string, number>();
  const children: ChildTiming[] = [];
  for (const e of events) {
    const start = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (start?.workflowId) initiated.set(start.workflowId, eventMs(e));
    const done = e.childWorkflowExecutionCompletedEventAttributes;
    const id = done?.workflowExecution?.workflowId;
    if (id)
      children.push({
        ref: refOf(id),
        workflowId: id,
        initiatedAt: initiated.get(id)!,
        completedAt: eventMs(e),
      });
  }
  return { startedAt: eventMs(events[0]!), closedAt: eventMs(events.at(-1)!), children };
}

export interface TaskOverhead {
  ref: string;
  /** Task ready (dependencies reported and a lane free) → agent process started. */
  startMs: number;
  /** Agent process exit → the task's completion recorded in the implementation workflow. */
  reportMs: number;
}

/**
 * Per-task orchestration overhead. A task is ready once its dependencies have reported and one of the
 * `lanes` is free: tasks launched before it (they came first in plan order) hold the lanes until they
 * report. The implementation workflow's start counts as the moment tasks without dependencies are ready.
 */
export function taskOverheads(
  timings: ImplementationTimings,
  deps: Record<string, string[]>,
  lanes: number,
  agents: AgentRecord[],
): TaskOverhead[] {
  const byLaunch = [...timings.children].sort((a, b) => a.initiatedAt - b.initiatedAt);
  const reported = new Map(byLaunch.map((c) => [c.ref, c.completedAt]));
  return byLaunch.map((child, index) => {
    const depsReady = Math.max(timings.startedAt, ...(deps[child.ref] ?? []).map((d) => reported.get(d)!));
    const earlier = byLaunch.slice(0, index).map((c) => c.completedAt);
    const running = (t: number) => earlier.filter((done) => done > t).length;
    const candidates = [depsReady, ...earlier.filter((t) => t > depsReady)].sort((a, b) => a - b);
    const ready = candidates.find((t) => running(t) < lanes) ?? depsReady;
    const runs = agents.filter((a) => a.task === child.ref);
    if (runs.length === 0) throw new Error(`No agent record for task ${child.ref}.`);
    const first = runs.reduce((a, b) => (a.start <= b.start ? a : b));
    const last = runs.reduce((a, b) => (a.exit >= b.exit ? a : b));
    return { ref: child.ref, startMs: first.start - ready, reportMs: child.completedAt - last.exit };
  });
}

/**
 * When each task's change became visible to a reader: the completion of the implementation workflow's
 * workflow task that made it (a query is answered from the state after the last completed workflow task).
 * `running`: the workflow task that started the task's child; `passed`: the first workflow task after the
 * child completed (both then go out together in the next query).
 * Keyed by the task's workflow id, over every run of the implementation (it continues as new).
 */
export function taskChangesVisibleAt(
  histories: History[],
): Record<'running' | 'passed', Map<string, number>> {
  const running = new Map<string, number>();
  const passed = new Map<string, number>();
  for (const history of histories) {
    const completed = new Map<number, number>();
    let heard: string[] = [];
    for (const e of history.events ?? []) {
      if (e.workflowTaskCompletedEventAttributes) {
        completed.set(Number(e.eventId), eventMs(e));
        for (const id of heard) passed.set(id, eventMs(e));
        heard = [];
      }
      const start = e.startChildWorkflowExecutionInitiatedEventAttributes;
      if (start?.workflowId)
        running.set(start.workflowId, completed.get(Number(start.workflowTaskCompletedEventId))!);
      const done = e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId;
      if (done) heard.push(done);
    }
  }
  return { running, passed };
}
