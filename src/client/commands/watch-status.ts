/** What `saga watch --status` and `saga list` say about the running watches (their `watchStatus` query). */
import type { Client } from '@temporalio/client';
import { watchStatusQuery } from '../../domain/saga/messages';
import type { TrackerWatchStatus } from '../../domain/tracker/issue-sync';
import { oneTerminalLine } from '../../domain/text/terminal';

/** How long `saga list` waits for a watch's answer (no worker: the list is still printed). */
const QUERY_WAIT_MS = 5_000;

/** One line per watch: `gitea:alice/demo label saga — 2 started, 1 running, 0 waiting`. */
export function watchSummary(status: TrackerWatchStatus): string {
  const counts = `${status.started.length} started, ${status.running.length} running, ${status.waiting.length} waiting`;
  const notes = [
    status.stopping ? 'stopping' : null,
    status.lastError ? `last error: ${status.lastError}` : null,
  ];
  const tail = notes.filter(Boolean).join('; ');
  // The error may quote the tracker's own words: one line, no control characters.
  return oneTerminalLine(`${status.scope} label ${status.label} — ${counts}${tail ? ` (${tail})` : ''}`);
}

/** `saga watch --status`: the summary, then each issue started, running and waiting. */
export function watchStatusLines(status: TrackerWatchStatus): string[] {
  const lines = [`Watch: ${watchSummary(status)}`];
  for (const s of status.started)
    lines.push(
      s.handledBefore
        ? `  handled before ${s.ref} (labelled ${s.handledBefore}): no saga started (${s.at})`
        : `  started ${s.ref} → saga ${s.sagaName} (${s.at})`,
    );
  if (status.running.length) lines.push(`  running: ${status.running.join(', ')}`);
  if (status.waiting.length) lines.push(`  waiting for a free place: ${status.waiting.join(', ')}`);
  lines.push(`  last poll: ${status.lastPollAt ?? 'not yet'}`);
  return lines.map(oneTerminalLine);
}

/** The running watches' summaries, for `saga list`; a watch no worker answers for says so. */
export async function runningWatchLines(client: Client): Promise<string[]> {
  const lines: string[] = [];
  const query = `WorkflowType = 'trackerWatchWorkflow' AND ExecutionStatus = 'Running'`;
  for await (const wf of client.workflow.list({ query })) {
    const answer = client.workflow.getHandle(wf.workflowId).query(watchStatusQuery);
    answer.catch(() => undefined);
    const status = await Promise.race([
      answer.catch(() => null),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), QUERY_WAIT_MS).unref()),
    ]);
    lines.push(
      status ? watchSummary(status) : `${wf.workflowId} — no worker answers (is saga worker running?)`,
    );
  }
  return lines;
}
