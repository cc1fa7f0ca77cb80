/** The board API's JSON (the contract in docs and README "The saga board"): the saga list and one saga's view. */
import type { Client } from '@temporalio/client';
import { uiSagaListUrl, uiWorkflowUrl } from '../../domain/contract/naming';
import { isEndedPhase, type SagaStatus, type Usage } from '../../domain/contract/state';
import { describeSaga, getStatus, listSagas, type SagaListEntry } from '../saga-client';
import { runningAgents } from '../running-agents';
import { statusJson, type StatusJson } from '../status-json';

export interface SagaSummary {
  name: string;
  phase: string;
  goal: string;
  running: boolean;
  integrated: number;
  total: number;
  costUsd: number;
  budgetUsd: number | null;
  /** Pending interactions. */
  waiting: number;
  /**
   * When the newest pending interaction opened (null: none, or unknown). The page's notifications read a
   * saga's questions only when this is newer than what they have seen, not every waiting saga's.
   */
  waitingSince: string | null;
  startedAt: string;
}

/** A running task's agent as its heartbeat tells (no elapsed time: it would change every read). */
export interface LiveAgent {
  lastLine: string;
  step: string | null;
  attempt: number | null;
  usage: Usage | null;
}

export interface SagaView {
  status: StatusJson;
  links: { saga: string | null; list: string | null; tasks: Record<string, string> };
  /** Running tasks' agents by task ref. */
  agents: Record<string, LiveAgent>;
}

/** Where the Web UI is and in which namespace the sagas live (links are null without a Web UI). */
export interface UiPlace {
  uiBaseUrl: string | null;
  namespace: string;
}

export function sagaView(status: SagaStatus, ui: UiPlace, agents: Record<string, LiveAgent> = {}): SagaView {
  const base = ui.uiBaseUrl;
  const tasks: Record<string, string> = {};
  if (base)
    for (const m of status.milestones)
      for (const t of m.tasks)
        if (t.workflowId) tasks[t.id] = uiWorkflowUrl(base, ui.namespace, t.workflowId);
  return {
    status: statusJson(status),
    links: {
      saga: base ? uiWorkflowUrl(base, ui.namespace, status.workflowId) : status.uiUrl || null,
      list: base ? uiSagaListUrl(base, ui.namespace, status.name) : null,
      tasks,
    },
    agents,
  };
}

/**
 * One saga's view with its running agents (`withAgents: false`: without them, a round trip fewer for a page's
 * first paint). A closed saga's view is read once and kept while its run stays the same: its status query
 * replays the whole history, which for a big saga costs the server seconds.
 */
export async function readSagaView(
  client: Client,
  name: string,
  ui: UiPlace,
  closedCache: Map<string, { runId: string; view: SagaView }>,
  { withAgents = true } = {},
): Promise<SagaView> {
  const cached = closedCache.get(name);
  if (cached) {
    const desc = await describeSaga(client, name);
    if (desc.runId === cached.runId && desc.status.name !== 'RUNNING') return cached.view;
  }
  const status = await getStatus(client, name);
  const agents: Record<string, LiveAgent> = {};
  for (const a of withAgents ? await runningAgents(client, status) : [])
    agents[a.taskId] = { lastLine: a.lastLine, step: a.step, attempt: a.attempt, usage: a.usage };
  const view = sagaView(status, ui, agents);
  if (isEndedPhase(status.phase) && status.runId && withAgents)
    closedCache.set(name, { runId: status.runId, view });
  else closedCache.delete(name);
  return view;
}

/** One row of the list: from the status when it could be read, else from the search attributes. */
export function sagaSummary(entry: SagaListEntry, status: SagaStatus | null): SagaSummary {
  const tasks = status?.milestones.flatMap((m) => m.tasks) ?? [];
  const phase = status?.phase ?? entry.phase ?? 'unknown';
  // A saga cancelled while it waited keeps its SagaAwaitingInput attribute (clearing it would be a new
  // history event); its status, once read, has no questions (saga-run.ts status()).
  const pending = isEndedPhase(phase) ? [] : (status?.pending ?? null);
  return {
    name: entry.name,
    phase,
    goal: status?.goal ?? '',
    running: entry.status === 'RUNNING',
    integrated: tasks.filter((t) => t.status === 'integrated').length,
    total: tasks.length,
    costUsd: status?.usage?.costUsd ?? 0,
    budgetUsd: status?.budgetUsd ?? null,
    waiting: pending ? pending.length : entry.awaitingInput ? 1 : 0,
    waitingSince:
      pending
        ?.map((p) => p.openedAt)
        .sort()
        .pop() ?? null,
    startedAt: entry.startTime,
  };
}

/** A closed saga whose status could not be read is tried again after this long (its worker may be back). */
const CLOSED_RETRY_MS = 60_000;
/**
 * A running saga whose status query did not answer twice running (its worker is gone) is asked again after
 * this long, or as soon as its search attributes change (a worker set them): each ask costs the list the
 * read's time limit. One miss (a busy worker) is asked again at the next read.
 */
const SILENT_RETRY_MS = 30_000;

export interface ListCache {
  /**
   * Summaries kept by workflow id: a closed saga's while its run stays the same, a running saga's that did
   * not answer until it is due again (retryAt) or its search attributes change.
   */
  kept: Map<string, { key: string; summary: SagaSummary; retryAt: number | null; misses: number }>;
  /** The latest status of a saga someone watches (read by its own topic), reused instead of asked again. */
  recent(name: string): SagaStatus | undefined;
  /** A saga's status, or null when it cannot be read soon (a saga whose worker is gone never answers). */
  statusOf(name: string): Promise<SagaStatus | null>;
}

/**
 * The saga list, running first, newest first within each. A closed saga's status (a query replays its
 * history) is read once and kept while its run stays the same; a watched saga's status is its topic's; a
 * running saga that did not answer shows from its search attributes until it is due again.
 */
export async function sagaSummaries(client: Client, cache: ListCache): Promise<{ sagas: SagaSummary[] }> {
  const entries = await listSagas(client);
  const now = Date.now();
  const sagas = await Promise.all(
    entries.map(async (entry) => {
      const key = `${entry.status}:${entry.startTime}:${entry.phase}:${entry.awaitingInput}`;
      const running = entry.status === 'RUNNING';
      const kept = cache.kept.get(entry.workflowId);
      if (kept?.key === key && (kept.retryAt === null || kept.retryAt > now)) return kept.summary;
      // A saga no worker answers for still shows, from its search attributes.
      const status = (running ? cache.recent(entry.name) : undefined) ?? (await cache.statusOf(entry.name));
      const result = sagaSummary(entry, status);
      const misses = status ? 0 : (kept?.key === key ? kept.misses : 0) + 1;
      if (running && status) cache.kept.delete(entry.workflowId);
      else
        cache.kept.set(entry.workflowId, {
          key,
          summary: result,
          retryAt: status ? null : now + (!running ? CLOSED_RETRY_MS : misses > 1 ? SILENT_RETRY_MS : 0),
          misses,
        });
      return result;
    }),
  );
  sagas.sort((a, b) => Number(b.running) - Number(a.running) || b.startedAt.localeCompare(a.startedAt));
  return { sagas };
}
