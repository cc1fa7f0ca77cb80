/** The saga's audit trail: manifest.md's front matter (merged on every update) and decisions.md's entries. */
import * as path from 'node:path';
import {
  MANIFEST_LIST_KEYS,
  ManifestFrontSchema,
  parseManifest,
  renderManifest,
  type ManifestFront,
  type ManifestFrontInput,
} from '../../domain/record/manifest';
import { DECISIONS_HEADER, renderDecisionEntry } from '../../domain/record/render';
import { zodIssueLines } from '../../domain/text/zod-errors';
import { lockFile } from './file-io';
import { badInput, type SagaFiles } from './saga-files';
import { SAGA_FILES } from '../../domain/contract/saga-dir';

export interface ManifestUpdate {
  sagaDir: string;
  /** Fields to set. `flags` and scalars replace; list fields replace too unless `append` is set. */
  patch: Partial<ManifestFrontInput>;
  /**
   * Append the patch's list items (auto_picked_checkpoints, autonomous_decisions, quality_locked_history)
   * instead of replacing the lists. An item equal to one already present is skipped, so a retried
   * activity never logs the same entry twice.
   */
  append?: boolean;
}

/** Read, merge, validate and write manifest.md's front matter; the body is kept as it is. */
export async function updateManifest(
  files: SagaFiles,
  input: ManifestUpdate,
): Promise<{ front: ManifestFront }> {
  const release = await lockFile(path.join(input.sagaDir, SAGA_FILES.manifest));
  try {
    const existingText = await files.read(input.sagaDir, SAGA_FILES.manifest);
    let current: { front: ManifestFront; body: string } | null = null;
    if (existingText !== null) {
      try {
        current = parseManifest(existingText);
      } catch (err) {
        throw badInput(`${(err as Error).message} (in ${input.sagaDir}); fix or remove the file.`);
      }
    }
    const merged: Record<string, unknown> = { ...current?.front, ...input.patch };
    if (input.append && current) {
      for (const key of MANIFEST_LIST_KEYS) {
        const additions = input.patch[key];
        if (!additions) continue;
        const seen = new Set(current.front[key].map((item) => JSON.stringify(item)));
        const parsedAdditions = ManifestFrontSchema.shape[key].parse(additions) as unknown[];
        merged[key] = [
          ...current.front[key],
          ...parsedAdditions.filter((item) => !seen.has(JSON.stringify(item))),
        ];
      }
    }
    const parsed = ManifestFrontSchema.safeParse(merged);
    if (!parsed.success) {
      const issues = zodIssueLines(parsed.error, '(front matter)');
      const hint = current
        ? ''
        : ' (manifest.md does not exist yet: the first update must set saga, flags, execution_mode)';
      throw badInput(`Invalid manifest update${hint}: ${issues.join('; ')}`);
    }
    await files.write(input.sagaDir, SAGA_FILES.manifest, renderManifest(parsed.data, current?.body));
    return { front: parsed.data };
  } finally {
    release();
  }
}

export interface DecisionInput {
  sagaDir: string;
  entry: { at: string; title: string; lines: string[] };
}

/** decisions.md keeps its header and lists entries newest first; an entry already present is not re-added. */
export async function prependDecision(files: SagaFiles, input: DecisionInput): Promise<{ added: boolean }> {
  const release = await lockFile(path.join(input.sagaDir, SAGA_FILES.decisions));
  try {
    let entry: string;
    try {
      entry = renderDecisionEntry(input.entry);
    } catch (err) {
      throw badInput((err as Error).message);
    }
    const existing = (await files.read(input.sagaDir, SAGA_FILES.decisions)) ?? '';
    const firstEntry = existing.search(/^### /m);
    const header =
      (firstEntry === -1 ? existing : existing.slice(0, firstEntry)).trim() || DECISIONS_HEADER.trim();
    const entries = firstEntry === -1 ? '' : existing.slice(firstEntry).trim();
    if (entries.includes(entry.trim())) return { added: false };
    await files.write(
      input.sagaDir,
      SAGA_FILES.decisions,
      `${header}\n\n${entry.trim()}\n${entries ? `\n${entries}\n` : ''}`,
    );
    return { added: true };
  } finally {
    release();
  }
}
