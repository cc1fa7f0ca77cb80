/** Codex: `exec --json` JSONL: thread.started, item.*, turn.completed {usage}, turn.failed, error. */
import { arr, num, obj, str, type Json } from '../../text/json-fields';
import { codexTurnUsage } from './cli-usage';
import type { Usage } from '../../contract/state';
import { addUsage, noUsage } from '../usage';
import { apiFailure, failure, SEE_README } from './failures';
import type { CliOutputReader, Read, ReadInput } from './reader';
import { firstMatchingLine, joined, oneLine } from './text';

function readCodex(lines: Json[], input: ReadInput): Read {
  const thread = lines.find((l) => l.type === 'thread.started');
  let usage: Usage | null = null;
  for (const line of lines) {
    const u = line.type === 'turn.completed' ? obj(line.usage) : null;
    if (!u) continue;
    usage = addUsage(usage ?? noUsage(), codexTurnUsage(u));
  }
  const errors = lines
    .filter((l) => l.type === 'error' || l.type === 'turn.failed')
    .map((l) => str(l.message) ?? str(obj(l.error)?.message) ?? JSON.stringify(l));
  const read: Read = { sessionId: str(thread?.thread_id), usage };
  if (errors.length) {
    const text = errors.join(' ');
    read.failure =
      apiFailure(input.profile, text) ??
      failure('cli-error', `agent ${input.profile} failed: ${oneLine(errors[errors.length - 1]!)}`);
  } else if (/blocked by read-only sandbox|rejected by user approval settings/.test(input.transcript)) {
    // A denied edit leaves no JSON event; only codex's stderr says so.
    read.failure = failure(
      'permission-denied',
      `agent ${input.profile} was refused edits by its sandbox (read-only) — its sandbox mode blocks edits; ${SEE_README}`,
    );
  } else {
    const broken = lines
      .map((l) => (l.type === 'item.completed' ? obj(l.item) : null))
      .find((item) => item && /bwrap:|landlock|seccomp/i.test(str(item.aggregated_output) ?? ''));
    if (broken)
      read.failure = failure(
        'permission-denied',
        `agent ${input.profile}: its sandbox cannot start on this machine (${oneLine(firstMatchingLine(str(broken.aggregated_output) ?? '', /bwrap|landlock|seccomp/i))}) — ${SEE_README}`,
      );
  }
  return read;
}

function lineText(e: Json): string | null {
  const item = obj(e.item);
  if (e.type === 'thread.started') return `session ${str(e.thread_id)}`;
  if (e.type === 'turn.completed') {
    const u = obj(e.usage);
    return `= turn done: ${num(u?.input_tokens)} in / ${num(u?.output_tokens)} out tokens`;
  }
  if (e.type === 'error' || e.type === 'turn.failed')
    return `error: ${str(e.message) ?? str(obj(e.error)?.message)}`;
  if (e.type !== 'item.completed' || !item) return null;
  if (item.type === 'agent_message') return str(item.text);
  if (item.type === 'command_execution') return `$ ${str(item.command)} (exit ${String(item.exit_code)})`;
  if (item.type === 'file_change')
    return `edited ${arr(item.changes)
      .map((c) => str(obj(c)?.path))
      .filter(Boolean)
      .join(', ')}`;
  if (item.type === 'error') return `error: ${str(item.message)}`;
  return null;
}

function answerText(lines: Json[]): string | null {
  return joined(
    lines.map((l) => obj(l.item)).map((i) => (i?.type === 'agent_message' ? str(i.text) : null)),
    '\n',
  );
}

export const codexReader: CliOutputReader = { outcome: readCodex, line: lineText, answer: answerText };
