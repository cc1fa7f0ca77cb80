/**
 * What `saga mcp` reads from a saga's directory: an agent's transcript as readable lines (`saga logs`) and
 * SAGA.md, PROGRESS.md and REPORT.md. The directory is the one the saga's status names.
 */
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { SAGA_FILES } from '../../domain/contract/saga-dir';
import { stripControls } from '../../domain/text/terminal';
import { defaultSagaHome } from '../../worker/host-settings';
import { UserError } from '../errors';
import { getStatus } from '../saga-client';
import { findTranscript, transcriptTailLines } from '../transcripts';

/** The files a client may read, by the name in their resource URI. */
export const SAGA_DOCUMENTS = [SAGA_FILES.saga, SAGA_FILES.progress, SAGA_FILES.report] as const;
export type SagaDocument = (typeof SAGA_DOCUMENTS)[number];

/** The saga's directory, from its status; a saga the server no longer knows: its default place, if there. */
export async function sagaDirOf(client: () => Promise<Client>, name: string): Promise<string> {
  const fallback = path.join(defaultSagaHome(), name);
  try {
    return (await getStatus(await client(), name)).sagaDir;
  } catch (error) {
    if (error instanceof UserError && existsSync(fallback)) return fallback;
    throw error;
  }
}

/** The last `tail` readable lines of a task's newest transcript, terminal controls stripped. */
export async function transcriptTail(sagaDir: string, taskId: string, tail: number): Promise<string[]> {
  const lines = await transcriptTailLines(await findTranscript(sagaDir, taskId), tail);
  return lines.map((line) => stripControls(line));
}

/** One of the saga's documents, terminal controls stripped; a clear error when it is not written yet. */
export async function readSagaDocument(sagaDir: string, name: string, file: SagaDocument): Promise<string> {
  try {
    return stripControls(await fs.readFile(path.join(sagaDir, file), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new UserError(`Saga '${name}' has no ${file} yet (its directory: ${sagaDir}).`);
    throw error;
  }
}
