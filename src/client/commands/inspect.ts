/** `saga status`, `saga list`, `saga logs`: reading a saga's state without changing it. */
import { finishedTaskCount } from '../../domain/saga/milestone-records';
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Client } from '@temporalio/client';
import { readableLine } from '../../domain/agents/cli-output';
import { pullRequestStatusLines } from '../../domain/record/pull-requests';
import { reconciliationSummary } from '../../domain/record/reconciliation';
import { isEndedPhase, type SagaStatus } from '../../domain/contract/state';
import { stripControls } from '../../domain/text/terminal';
import { defaultSagaHome } from '../../worker/host-settings';
import { bool } from '../args';
import type { ParsedArgs } from '../command-decl';
import { describeSaga, getStatus, listSagas } from '../saga-client';
import {
  formatUsage,
  milestoneUsage,
  renderRunningAgents,
  runningAgents,
  type RunningAgent,
} from '../running-agents';
import { statusJson } from '../status-json';
import { autoPickStatusLines, newAutoPickNotices } from '../auto-pick-view';
import { findTranscript, transcriptFormat } from '../transcripts';
import { runningWatchLines } from './watch-status';
import type { Io } from '../io';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function renderStatus(s: SagaStatus, agents: RunningAgent[] = []): string {
  const lines = [`Saga ${s.name} — ${s.phase}${s.round > 1 ? ` (round ${s.round})` : ''}`, `Goal: ${s.goal}`];
  if (s.source) lines.push(`Source: ${s.source.ref} (${s.source.url})`);
  if (s.error) lines.push(`Error: ${s.error}`);
  lines.push(`Mode: ${s.executionMode}`);
  lines.push(...autoPickStatusLines(s.log));
  if (s.configFile) lines.push(`Config: ${s.configFile}`);
  if (s.planSummary) {
    const p = s.planSummary;
    lines.push(`Plan${p.version === null ? '' : ` v${p.version}`} (${p.state}): ${p.specPath}`);
    lines.push(...p.text.split('\n').map((l) => `  ${l}`));
  }
  for (const m of s.milestones) {
    // A record this host cannot read still counts its tasks (its task lines are only those that did not land).
    const done = finishedTaskCount([m]);
    const spent = milestoneUsage(m);
    lines.push(
      `  Milestone ${m.id} ${m.title}: ${m.status}, ${done}/${m.record?.tasks ?? m.tasks.length} tasks done${spent.costUsd > 0 || spent.inputTokens > 0 ? ` (${formatUsage(spent)})` : ''}`,
    );
    // A terminal view: an integrated milestone's tasks that landed are one count on its line (at a thousand
    // tasks, their lines hid the milestone that runs); `--json` and PROGRESS.md keep every task.
    const shown = m.status === 'integrated' ? m.tasks.filter((t) => t.status !== 'integrated') : m.tasks;
    for (const t of shown) {
      const extra = [
        t.commit ? t.commit.slice(0, 10) : null,
        t.attempts ? `${t.attempts} attempt(s)` : null,
        t.reason,
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(`    ${t.id} ${t.slug}: ${t.status}${extra ? ` (${extra})` : ''}`);
    }
  }
  if (s.pending.length) {
    lines.push('Waiting for you:');
    for (const p of s.pending) {
      lines.push(`  [${p.id}] (${p.kind}) ${p.prompt}`);
      p.options.forEach((o, i) =>
        lines.push(`      ${i + 1}) ${o}${p.recommended === i ? '  (recommended)' : ''}`),
      );
      lines.push(
        `      answer: saga respond ${s.name} ${p.id} <choice>${p.textRequiredFor.length ? ' [--text "..."]' : ''}`,
      );
    }
  }
  lines.push(...pullRequestStatusLines(s.pullRequests));
  lines.push(...renderRunningAgents(agents));
  if (s.usage && (s.usage.costUsd > 0 || s.usage.inputTokens > 0))
    lines.push(`Usage: ${formatUsage(s.usage)}`);
  lines.push(`Integration branch: ${s.integrationBranch}`, `Saga directory: ${s.sagaDir}`);
  if (s.uiUrl) lines.push(`Web UI: ${s.uiUrl}`);
  if (s.reconciliation) {
    const summary = reconciliationSummary(s.reconciliation);
    lines.push(`Reconciliation: ${summary.heading}`, ...summary.findings.map((f) => `  - ${f}`));
  }
  if (s.log.length) lines.push('Recent:', ...s.log.slice(0, 5).map((l) => `  ${l}`));
  // Goals, reasons, prompts and log lines carry agents' and trackers' text: no escape of theirs is printed.
  return stripControls(lines.join('\n'));
}

export async function statusCommand(
  args: ParsedArgs,
  io: Io,
  connect: () => Promise<Client>,
): Promise<number> {
  const client = await connect();
  const name = args.positionals[0]!;
  const json = bool(args, 'json');
  const withUsage = statusJson;
  if (!bool(args, 'watch')) {
    const status = await getStatus(client, name);
    io.out(
      json
        ? JSON.stringify(withUsage(status), null, 2)
        : renderStatus(status, await runningAgents(client, status)),
    );
    return 0;
  }
  for (;;) {
    const status = await getStatus(client, name);
    io.out(
      json
        ? JSON.stringify(withUsage(status))
        : `\x1b[2J\x1b[H${renderStatus(status, await runningAgents(client, status))}`,
    );
    if (isEndedPhase(status.phase)) return 0;
    await sleep(1000);
  }
}

/** Prints each new interaction until the saga ends (`saga start --wait`). */
export async function watchUntilDone(client: Client, name: string, io: Io): Promise<number> {
  const seen = new Set<string>();
  for (;;) {
    const desc = await describeSaga(client, name);
    if (desc.status.name !== 'RUNNING') {
      io.out(`Saga ${name} ended: ${desc.status.name}`);
      return desc.status.name === 'COMPLETED' ? 0 : 1;
    }
    const status = await getStatus(client, name);
    // An auto-picked checkpoint shows as its notice, where a prompt would have been.
    for (const notice of newAutoPickNotices(status.log, seen)) io.out(stripControls(notice.join('\n')));
    for (const p of status.pending) {
      if (seen.has(p.id)) continue;
      seen.add(p.id);
      io.out(
        stripControls(
          `[${p.id}] (${p.kind}) ${p.prompt}\n  options: ${p.options.map((o, i) => `${i + 1}) ${o}`).join('  ')}`,
        ),
      );
    }
    await sleep(1000);
  }
}

export async function listCommand(args: ParsedArgs, io: Io, connect: () => Promise<Client>): Promise<number> {
  const client = await connect();
  const sagas = await listSagas(client);
  if (bool(args, 'json')) io.out(JSON.stringify(sagas, null, 2));
  else if (!sagas.length) io.out('No sagas yet. Start one: saga start --repo PATH -- "Ship dark mode"');
  else
    for (const s of sagas)
      io.out(
        `${s.name.padEnd(40)} ${(s.phase ?? '-').padEnd(15)} ${s.status}${s.awaitingInput ? '  (waiting for input)' : ''}`,
      );
  // The running `saga watch`es, under the sagas they start (the JSON list stays the sagas' alone).
  if (!bool(args, 'json')) for (const line of await runningWatchLines(client)) io.out(`Watches: ${line}`);
  return 0;
}

export async function logsCommand(args: ParsedArgs, io: Io, connect: () => Promise<Client>): Promise<number> {
  const [name, taskId] = args.positionals as [string, string];
  let sagaDir = path.join(defaultSagaHome(), name);
  try {
    sagaDir = (await getStatus(await connect(), name)).sagaDir;
  } catch (error) {
    if (!existsSync(sagaDir)) throw error;
  }
  const file = await findTranscript(sagaDir, taskId);
  const format = bool(args, 'raw') ? 'text' : await transcriptFormat(file);
  // A CLI's JSON stream is shown as readable lines (--raw: as written); only whole lines are rendered. The
  // agent wrote it: its control characters and escape sequences are dropped (a sequence cut by a chunk's
  // end leaves printable characters only), newlines and tabs kept.
  let partial = '';
  const decoder = new StringDecoder('utf8');
  const write = (chunk: Buffer) => {
    const text = decoder.write(chunk);
    if (format === 'text') return void process.stdout.write(stripControls(text));
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const readable = readableLine(format, line);
      if (readable !== null) io.out(stripControls(readable));
    }
  };
  let offset = 0;
  const pump = async () => {
    const size = statSync(file).size;
    if (size <= offset) return;
    await new Promise<void>((resolve, reject) => {
      createReadStream(file, { start: offset, end: size - 1 })
        .on('data', (chunk) => write(chunk as Buffer))
        .on('end', () => resolve())
        .on('error', reject);
    });
    offset = size;
  };
  await pump();
  if (!bool(args, 'follow')) return 0;
  io.err(`(following ${file}; Ctrl-C to stop)`);
  for (;;) {
    await sleep(500);
    await pump();
  }
}
