/**
 * An agent run's transcript in a saga directory: which file is a task's newest (`saga logs`, the board's
 * transcript tail) and the output format its CLI wrote it in.
 */
import { existsSync, promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import { readableLine } from '../domain/agents/cli-output';
import { AGENT_OUTPUT_FORMATS, AGENT_RUN_FILE, type AgentOutputFormat } from '../domain/config/agent-presets';
import { UserError } from './errors';

/** The output format recorded beside a transcript (runs before it was recorded: plain text). */
export async function transcriptFormat(transcript: string): Promise<AgentOutputFormat> {
  try {
    const run = JSON.parse(
      await fs.readFile(path.join(path.dirname(transcript), AGENT_RUN_FILE), 'utf8'),
    ) as { output?: string };
    return AGENT_OUTPUT_FORMATS.find((f) => f === run.output) ?? 'text';
  } catch {
    return 'text';
  }
}

/** Newest transcript of a task: `<sagaDir>/runs/<key>-d<D>-a<A>/transcript.log`. */
export async function findTranscript(sagaDir: string, taskId: string): Promise<string> {
  const key = /^(\d+)\.(\d+)$/.test(taskId) ? taskId.replace(/^(\d+)\.(\d+)$/, 'm$1t$2') : taskId;
  if (!/^m\d+t\d+$/.test(key)) throw new UserError(`Task id '${taskId}': expected a form like 1.2 or m1t2.`);
  const runs = path.join(sagaDir, 'runs');
  const dirs = existsSync(runs)
    ? (await fs.readdir(runs)).filter((d) => d.startsWith(`${key}-`) && !d.endsWith('-checks'))
    : [];
  const candidates = dirs
    .map((d) => path.join(runs, d, 'transcript.log'))
    .filter((f) => existsSync(f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  if (!candidates.length)
    throw new UserError(`No agent transcript for task ${taskId} yet (looked in ${runs}).`);
  return candidates[candidates.length - 1]!;
}

/** A transcript's end is enough for its last lines; a long run's whole file is not read. */
const TAIL_READ_BYTES = 2 * 1024 * 1024;

/** The last `tail` readable lines of a transcript, as `saga logs` prints them (the board and `saga mcp`). */
export async function transcriptTailLines(file: string, tail: number): Promise<string[]> {
  const format = await transcriptFormat(file);
  const handle = await fs.open(file, 'r');
  let text: string;
  let fromMiddle = false;
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - TAIL_READ_BYTES);
    fromMiddle = start > 0;
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    text = buffer.toString('utf8');
  } finally {
    await handle.close();
  }
  const raw = text.split('\n');
  // A read from the middle starts with a partial line; the last one may still be written.
  const whole = raw.slice(fromMiddle ? 1 : 0, -1);
  const lines =
    format === 'text' ? whole : whole.map((l) => readableLine(format, l)).filter((l) => l !== null);
  return lines.slice(-tail);
}
