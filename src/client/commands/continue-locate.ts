/**
 * Which saga `saga continue` continues: the one named, else the only active one; with several active it
 * asks at a terminal and refuses in a script (which must say which one).
 */
import { createInterface } from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import { SagaRepo } from '../../domain/contract/search-attributes';
import { UserError } from '../errors';
import { listSagas, type SagaListEntry } from '../saga-client';

export const CLOSED_RESUMABLE = ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'];

/** Where `saga continue` asks which saga when several are active (the terminal, unless a test says). */
export interface Terminal {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
}

/**
 * Finds the saga: by name, else the only active one; several active → asked at a terminal, refused with
 * their names in a script (which must say which one).
 */
export async function locate(client: Client, name: string | undefined, terminal: Terminal): Promise<string> {
  if (name) return name;
  const sagas = await listSagas(client);
  const active = sagas.filter((s) => s.status === 'RUNNING');
  if (active.length === 1) return active[0]!.name;
  if (active.length > 1) {
    // Numbered in the order they started, so the numbers mean the same at every call.
    const rows = await describeActive(
      client,
      [...active].sort((a, b) => a.startTime.localeCompare(b.startTime)),
    );
    if (terminal.input.isTTY) return chooseSaga(rows, terminal);
    throw new UserError(
      `Several sagas are active; say which one: saga continue NAME\n${rows.map((r) => `  ${r.line}`).join('\n')}`,
    );
  }
  const resumable = sagas.filter((s) => CLOSED_RESUMABLE.includes(s.status));
  throw new UserError(
    resumable.length
      ? `No saga is running. These ended early and can be continued by name:\n${resumable.map((s) => `  ${s.name} (${s.status})`).join('\n')}`
      : 'No saga to continue. Start one: saga start --repo PATH -- "your goal"',
  );
}

/**
 * One line per saga: name, phase, whether it waits for input (or how its run ended), repo (from its search
 * attributes).
 */
export async function describeActive(
  client: Client,
  active: SagaListEntry[],
): Promise<{ name: string; repo: string; line: string }[]> {
  const repos = await Promise.all(
    active.map((s) =>
      client.workflow
        .getHandle(s.workflowId)
        .describe()
        .then(
          (d) => d.typedSearchAttributes.get(SagaRepo) ?? '?',
          () => '?',
        ),
    ),
  );
  const width = Math.max(...active.map((s) => s.name.length));
  return active.map((s, i) => ({
    name: s.name,
    repo: repos[i]!,
    line: [
      s.name.padEnd(width),
      `phase ${s.phase ?? '?'}`,
      s.status !== 'RUNNING'
        ? `run ${s.status.toLowerCase()}`
        : s.awaitingInput
          ? 'waiting for input'
          : 'no pending input',
      `repo ${repos[i]}`,
    ].join('  '),
  }));
}

/** Lists the sagas and reads a number or a name until one matches; end of input chooses none. */
export async function chooseSaga(
  rows: { name: string; line: string }[],
  terminal: Terminal,
  what = 'Several sagas are active',
): Promise<string> {
  const rl = createInterface({ input: terminal.input, output: terminal.output, terminal: true });
  // Ctrl-C or end of input closes the prompt, and a pending question then gives up (no hang).
  const closing = new AbortController();
  rl.on('SIGINT', () => rl.close());
  rl.on('close', () => closing.abort());
  try {
    terminal.output.write(`${what}:\n${rows.map((r, i) => `  ${i + 1}) ${r.line}`).join('\n')}\n`);
    while (!closing.signal.aborted) {
      const answer = (
        await rl
          .question(`Which saga? (1-${rows.length} or a name): `, { signal: closing.signal })
          .catch(() => null)
      )?.trim();
      if (answer === undefined) break;
      const byNumber = /^\d+$/.test(answer) ? rows[Number(answer) - 1] : undefined;
      const chosen = byNumber ?? rows.find((r) => r.name === answer);
      if (chosen) return chosen.name;
      terminal.output.write(`'${answer}' is neither a number from 1 to ${rows.length} nor a listed name.\n`);
    }
    throw new UserError('No saga chosen; nothing continued. Say which one: saga continue NAME');
  } finally {
    rl.close();
  }
}
