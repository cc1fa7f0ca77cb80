/** PROGRESS.md and the whole saga log behind it; every write of the saga's projection goes through here. */
import * as path from 'node:path';
import { decisionNotes, integrationNotes, mergeLog } from '../../domain/record/progress-log';
import { renderProgressMd, type ProgressExtra } from '../../domain/record/render';
import type { SagaStatus } from '../../domain/contract/state';
import { writeCostRecord } from './cost-records';
import { lockFile } from './file-io';
import type { SagaFiles } from './saga-files';
import { refreshSpecTree, type SpecTreeRefresh } from './spec-tree';
import { SAGA_FILES } from '../../domain/contract/saga-dir';

/** PROGRESS.md is written from what refreshes the spec tree: the status, and the plan when given. */
export type ProgressInput = SpecTreeRefresh;

/**
 * PROGRESS.md (the whole log, decisions and deviations, integration notes) and, from the same status, the
 * spec tree; at the saga's end its cost record too.
 */
export async function writeProgress(files: SagaFiles, input: ProgressInput): Promise<{ path: string }> {
  const log = await appendProgressLog(files, input.sagaDir, input.status);
  const decisionsMd = await files.read(input.sagaDir, SAGA_FILES.decisions).catch(() => null);
  const extra: ProgressExtra = {
    integrationNotes: integrationNotes(input.status, log),
    decisions: decisionNotes(log, decisionsMd),
    log: [...log].reverse(),
  };
  const written = await files.write(
    input.sagaDir,
    SAGA_FILES.progress,
    renderProgressMd(input.status, extra),
  );
  await refreshSpecTree(files, input);
  if (input.status.phase === 'complete' || input.status.phase === 'cancelled')
    await writeCostRecord(files, input.sagaDir, input.status);
  return { path: written };
}

/**
 * The whole log, oldest first: the one on disk (one JSON string per line) extended by the status's recent
 * lines.
 */
async function appendProgressLog(files: SagaFiles, sagaDir: string, status: SagaStatus): Promise<string[]> {
  const release = await lockFile(path.join(sagaDir, SAGA_FILES.progressLog));
  try {
    const text = (await files.read(sagaDir, SAGA_FILES.progressLog, Number.MAX_SAFE_INTEGER)) ?? '';
    const recorded = text
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        try {
          return String(JSON.parse(line));
        } catch {
          return line; // a line cut by a crash mid-write is kept as it is
        }
      });
    const merged = mergeLog(recorded, status.log);
    if (merged !== recorded)
      await files.write(
        sagaDir,
        SAGA_FILES.progressLog,
        merged.map((l) => `${JSON.stringify(l)}\n`).join(''),
      );
    return merged;
  } finally {
    release();
  }
}
