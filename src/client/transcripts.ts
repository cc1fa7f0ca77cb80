/**
 * An agent run's transcript in a saga directory: which file is a task's newest (`saga logs`, the board's
 * transcript tail) and the output format its CLI wrote it in.
 */
import { existsSync, promises as fs, statSync } from 'node:fs';
import path from 'node:path';
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
