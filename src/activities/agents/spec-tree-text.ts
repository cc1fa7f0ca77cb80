/**
 * The spec tree as prompt text, for the plan reviewer: its sandbox hides the saga directory (the saga home
 * is never shown to a confined process), so the files it is asked to review travel in its prompt.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SAGA_FILES } from '../../domain/contract/saga-dir';

/** Past this much text the remaining files are named, not shown (the plan itself is in the context). */
const SPEC_TREE_PROMPT_MAX = 200 * 1024;
const MILESTONES_DIR = 'milestones';

/** SAGA.md, then each milestone's MILESTONE.md and task specs in order; relative paths. */
async function specTreeFiles(sagaDir: string): Promise<string[]> {
  const files: string[] = [SAGA_FILES.saga];
  const milestones = await fs.readdir(path.join(sagaDir, MILESTONES_DIR)).catch(() => [] as string[]);
  for (const milestone of milestones.sort()) {
    const dir = path.join(MILESTONES_DIR, milestone);
    files.push(path.join(dir, SAGA_FILES.milestone));
    const tasks = await fs.readdir(path.join(sagaDir, dir, 'tasks')).catch(() => [] as string[]);
    files.push(
      ...tasks
        .filter((t) => t.endsWith('.md'))
        .sort()
        .map((t) => path.join(dir, 'tasks', t)),
    );
  }
  return files;
}

/** Each file fenced under its path as a heading; null when the saga directory holds no spec tree yet. */
export async function specTreeText(sagaDir: string): Promise<string | null> {
  const parts: string[] = [];
  const omitted: string[] = [];
  let size = 0;
  for (const rel of await specTreeFiles(sagaDir)) {
    const text = await fs.readFile(path.join(sagaDir, rel), 'utf8').catch(() => null);
    if (text === null) continue;
    if (size + text.length > SPEC_TREE_PROMPT_MAX) {
      omitted.push(rel);
      continue;
    }
    size += text.length;
    // Tildes, as for attachments: the files hold backtick fences of their own.
    parts.push(`### ${rel}\n\n~~~~markdown\n${text.trimEnd()}\n~~~~\n`);
  }
  if (parts.length === 0) return null;
  if (omitted.length > 0)
    parts.push(`(Not shown, over ${SPEC_TREE_PROMPT_MAX / 1024} KB: ${omitted.join(', ')}.)\n`);
  return parts.join('\n');
}
