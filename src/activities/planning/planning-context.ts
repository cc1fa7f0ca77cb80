/**
 * The autonomous planner's pre-flight context: repo conventions, constitution or principles, and prior
 * decisions, when present. Excerpts are short (history stays small); the planner reads the files itself.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { REPO_DECISIONS_FILE, SAGA_FILES } from '../../domain/contract/saga-dir';

/** What the autonomous planner is given before it decides anything. */
export interface PlanningContext {
  files: { path: string; excerpt: string }[];
  /** Titles of the latest decisions.md entries (this saga's, then the repo's `.sage/decisions.md`). */
  priorDecisions: string[];
}
const PREFLIGHT_FILES = [
  '.sage/conventions.md',
  '.sage/constitution.md',
  'CONVENTIONS.md',
  'CONSTITUTION.md',
  'PRINCIPLES.md',
];
const PREFLIGHT_EXCERPT = 2_000;
const PRIOR_DECISIONS = 20;

/** A file's text, or null when it is missing, not a file or too large to be a conventions file. */
async function readSmall(file: string): Promise<string | null> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > 1024 * 1024) return null;
    return await fs.readFile(file, 'utf8');
  } catch {
    return null;
  }
}

async function conventionFiles(repo: string): Promise<PlanningContext['files']> {
  const found: PlanningContext['files'] = [];
  for (const rel of PREFLIGHT_FILES) {
    const text = await readSmall(path.join(repo, rel));
    if (text !== null) found.push({ path: rel, excerpt: text.slice(0, PREFLIGHT_EXCERPT) });
  }
  return found;
}

/** The titles of the latest decisions, the saga's first, then the repo's. */
async function priorDecisionTitles(repo: string, sagaDir: string): Promise<string[]> {
  const priorDecisions: string[] = [];
  for (const file of [path.join(sagaDir, SAGA_FILES.decisions), path.join(repo, REPO_DECISIONS_FILE)]) {
    const text = await readSmall(file);
    if (text === null) continue;
    // Newest first: the first entries are the latest ones.
    const titles = text
      .split(/^### /m)
      .slice(1)
      .map((entry) => entry.split('\n')[0]!.trim());
    priorDecisions.push(...titles.slice(0, PRIOR_DECISIONS - priorDecisions.length));
  }
  return priorDecisions;
}

export async function planningContext(repo: string, sagaDir: string): Promise<PlanningContext> {
  return { files: await conventionFiles(repo), priorDecisions: await priorDecisionTitles(repo, sagaDir) };
}
