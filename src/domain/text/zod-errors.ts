/** How a failed zod validation reads in error messages, in one place. Pure. */
import type { z } from 'zod';

/**
 * One `path: message` line per issue, the path dotted (`milestones.0.slug`); `whole` stands for the path of
 * an issue about the value itself (`input`, `(front matter)`...).
 */
export function zodIssueLines(error: z.ZodError, whole: string): string[] {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : whole}: ${i.message}`);
}

/** `["agents", "mine", "command", 0]` → `agents.mine.command[0]`: a path as a YAML or JSON file reads. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>(
    (out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part),
    '',
  );
}
