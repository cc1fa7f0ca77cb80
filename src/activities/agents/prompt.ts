/** The prompt file of an agent run: instructions, attachments, how to answer, and the machine context. */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { AgentRunInput } from './input';

const ATTACHMENT_MAX = 24 * 1024;
const ATTACHMENT_HEAD = 4 * 1024;
const ATTACHMENTS_TOTAL_MAX = 64 * 1024;

/** Instructions, then attachments, then how to answer, then the machine context as the LAST json block. */
export async function composePrompt(input: AgentRunInput, reportPath: string): Promise<string> {
  const parts = [input.prompt.trimEnd(), ''];
  if (input.attachments.length > 0) {
    parts.push('## Attachments', '');
    let budget = ATTACHMENTS_TOTAL_MAX;
    for (const attachment of input.attachments) {
      const file = path.resolve(input.sagaDir, attachment);
      if (budget <= 0) {
        // Not "read the file": the saga directory is hidden from a confined agent.
        parts.push(`### ${file}`, '', '(not included: attachment budget used up)', '');
        continue;
      }
      const text = await excerpt(file, Math.min(ATTACHMENT_MAX, budget));
      budget -= Buffer.byteLength(text);
      parts.push(`### ${file}`, '', '~~~~text', text.trimEnd(), '~~~~', '');
    }
  }
  parts.push(
    '## Reporting',
    '',
    `Write your answer as one JSON object to the file named by $SAGA_REPORT_FILE (${reportPath}),` +
      ' or print it as the last ```json block of your output.',
    '',
    '## Context',
    '',
    '```json',
    // Backticks are escaped so the context can never close its own fence.
    JSON.stringify(input.context, null, 2).replace(/`/g, '\\u0060'),
    '```',
    '',
  );
  return parts.join('\n');
}

/**
 * The prompt of a resumed session: it already holds the task and its own earlier turns, so only what is
 * new goes in — why the last attempt failed and the failing checks' output (a retry), or that it was cut
 * off (a crash) — with the reporting rules and the machine context as in the full prompt.
 */
export async function composeResumePrompt(
  input: AgentRunInput,
  reportPath: string,
  promptPath: string,
): Promise<string> {
  const notes = Array.isArray(input.context.notes) ? (input.context.notes as unknown[]).map(String) : [];
  const intro =
    input.resume?.reason === 'interrupted'
      ? [
          'Your previous run on this task was cut off before it finished (the machine running it stopped).',
          'Carry on from where you were: the files you changed are still in your working directory.',
        ]
      : [
          `Attempt ${input.attempt}: your last attempt at this task did not pass its checks. Fix what they`,
          'report below, in the same working directory; your earlier changes are still there.',
        ];
  const body = [
    ...intro,
    '',
    ...(notes.length ? ['## What failed', '', ...notes.map((n) => `- ${n}`), ''] : []),
    `Your full instructions are still in ${promptPath}.`,
  ].join('\n');
  return composePrompt({ ...input, prompt: body }, reportPath);
}

/** The whole file when small, else its head and tail with a note on what was left out. */
async function excerpt(file: string, max: number): Promise<string> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    return `(could not read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    const { size } = await handle.stat();
    if (size <= max) return (await handle.readFile()).toString('utf8');
    const head = Math.min(ATTACHMENT_HEAD, Math.floor(max / 4));
    const tail = max - head;
    const headBuf = Buffer.alloc(head);
    const tailBuf = Buffer.alloc(tail);
    await handle.read(headBuf, 0, head, 0);
    await handle.read(tailBuf, 0, tail, size - tail);
    return `${headBuf.toString('utf8')}\n[... ${size - head - tail} bytes left out; full file: ${file} ...]\n${tailBuf.toString('utf8')}`;
  } finally {
    await handle.close();
  }
}
