/**
 * Reading the evidence the saga kept (check output, transcripts under the saga directory): the end of a file
 * for REPORT.md, and a spot-check that the evidence a finished task cites is there (`saga continue`). Only
 * files inside the saga directory are read.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isBelow } from './saga-files';

/** Enough of a check's output for its summary lines; a huge log is not read whole. */
const TAIL_BYTES = 8 * 1024;

/** The evidence file's path inside the saga directory, or null when it points elsewhere. */
async function insideSagaDir(sagaDir: string, evidence: string): Promise<string | null> {
  const file = path.resolve(sagaDir, evidence);
  if (!isBelow(path.resolve(sagaDir), file)) return null;
  const realDir = await fs.realpath(sagaDir).catch(() => path.resolve(sagaDir));
  const realFile = await fs.realpath(file).catch(() => file);
  return isBelow(realDir, realFile) ? realFile : null;
}

/** The last TAIL_BYTES of an evidence file (whole lines), or null when it is missing or outside the saga. */
export async function readEvidenceTail(sagaDir: string, evidence: string): Promise<string | null> {
  const file = await insideSagaDir(sagaDir, evidence);
  if (!file) return null;
  const handle = await fs.open(file, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const text = buffer.toString('utf8');
    // A cut first line is dropped; the command header line stays when the file was read whole.
    return length === size ? text : text.slice(text.indexOf('\n') + 1);
  } finally {
    await handle.close();
  }
}

/** Why an evidence file a finished task cites cannot back it (missing, empty, outside the saga), or null. */
export async function evidenceProblem(sagaDir: string, evidence: string): Promise<string | null> {
  const file = await insideSagaDir(sagaDir, evidence);
  if (!file) return `evidence '${evidence}' is outside the saga directory`;
  const stat = await fs.stat(file).catch(() => null);
  if (!stat) return `evidence '${evidence}' is missing`;
  if (!stat.isFile()) return `evidence '${evidence}' is not a file`;
  return stat.size === 0 ? `evidence '${evidence}' is empty` : null;
}
