/**
 * The per-repository memory of earlier sagas (src/domain/planning/memory.ts) on disk: `<saga home>/.memory/<key>.md`
 * on the host that holds the repository. Written when planning records its decisions and when the user
 * corrects an autonomous decision; read into every planner prompt.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import {
  addMemoryEntries,
  correctionEntry,
  memoryCitation,
  MEMORY_DIR,
  parseMemoryFile,
  renderMemoryFile,
  repoMemoryKey,
  type DecisionCorrection,
  type MemoryEntry,
  type SignalDates,
} from '../../domain/planning/memory';
import { isSafeRelativePath } from '../../domain/plan';
import type { createArtifactActivities } from '../artifacts';
import { writeFileAtomic } from '../artifacts';
import { execGit } from '../git-ops';

type Artifacts = ReturnType<typeof createArtifactActivities>;

/** The one place that says where a repository's memory file is. */
export async function repoMemoryFile(sagaHome: string, repo: string): Promise<string> {
  const absolute = await fs.realpath(repo).catch(() => path.resolve(repo));
  return path.join(path.resolve(sagaHome), MEMORY_DIR, `${repoMemoryKey(absolute)}.md`);
}

export async function readRepoMemory(sagaHome: string, repo: string): Promise<MemoryEntry[]> {
  const file = await repoMemoryFile(sagaHome, repo);
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  return parseMemoryFile(text);
}

/** Sagas of one repository may plan at the same time on this worker: their writes are serialised. */
const writing = new Map<string, Promise<unknown>>();

async function appendToRepoMemory(sagaHome: string, repo: string, entries: MemoryEntry[]): Promise<string> {
  const file = await repoMemoryFile(sagaHome, repo);
  const previous = writing.get(file) ?? Promise.resolve();
  const mine = previous
    .catch(() => undefined)
    .then(async () => {
      await fs.mkdir(path.dirname(file), { recursive: true });
      const existing = await readRepoMemory(sagaHome, repo);
      await writeFileAtomic(file, renderMemoryFile(repo, addMemoryEntries(existing, entries)));
    });
  writing.set(file, mine);
  try {
    await mine;
  } finally {
    if (writing.get(file) === mine) writing.delete(file);
  }
  return file;
}

export function createMemoryActivities(deps: { sagaHome: string; artifacts: Artifacts }) {
  return {
    /** Adds a saga's planning decisions to its repository's memory (an entry already there is kept once). */
    async rememberDecisions(input: { repo: string; entries: MemoryEntry[] }): Promise<{ file: string }> {
      return { file: await appendToRepoMemory(deps.sagaHome, input.repo, input.entries) };
    },

    /**
     * The user corrected autonomous decisions. Each becomes a `[LRN:correction]` entry in this
     * saga's decisions.md (what the memory entry cites) and in the repository's memory.
     */
    async recordCorrections(input: {
      repo: string;
      saga: string;
      sagaDir: string;
      user: string;
      corrections: DecisionCorrection[];
      /** Where the user corrected it (the decisions.md title says so); plan approval when absent. */
      at?: string;
    }): Promise<{ file: string }> {
      const at = new Date().toISOString();
      const entries = input.corrections.map((c) =>
        correctionEntry(c, { saga: input.saga, at, user: input.user }),
      );
      await deps.artifacts.prependDecision({
        sagaDir: input.sagaDir,
        entry: {
          at,
          title: `[LRN:correction] ${input.corrections.length} autonomous decision(s) corrected by ${input.user}${input.at ? ` at ${input.at}` : ''}`,
          lines: input.corrections.map(
            (c) =>
              `- D${c.number} ${c.decision.question}: ${c.decision.choice} (${c.decision.citation}) → ${c.correction}`,
          ),
        },
      });
      // At acceptance the plan is not revised: SAGA.md's rationale is corrected here instead.
      if (input.at)
        await deps.artifacts.correctRationale({
          sagaDir: input.sagaDir,
          corrections: input.corrections,
          where: input.at,
          user: input.user,
        });
      return { file: await appendToRepoMemory(deps.sagaHome, input.repo, entries) };
    },

    /**
     * Conflict handling: when the cited memory entry was written and when the cited file last
     * changed (its last commit in `worktree`), so the newer signal can win. Null for what is not found.
     */
    async signalDates(input: {
      repo: string;
      worktree: string;
      memoryCitation: string;
      path: string;
    }): Promise<SignalDates> {
      const cited = (await readRepoMemory(deps.sagaHome, input.repo))
        .filter((e) => memoryCitation(e) === input.memoryCitation.trim())
        .map((e) => e.at)
        .sort();
      let codebaseAt: string | null = null;
      if (isSafeRelativePath(input.path)) {
        const out = await execGit(input.worktree, ['log', '-1', '--format=%cI', '--', input.path]).catch(
          () => null,
        );
        codebaseAt = out?.code === 0 && out.stdout.trim() ? out.stdout.trim() : null;
      }
      return { memoryAt: cited[cited.length - 1] ?? null, codebaseAt };
    },
  };
}
