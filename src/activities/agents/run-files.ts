/** Files of one agent run folder: atomic writes, bounded reads, and the process group a crashed try left. */
import { promises as fs } from 'node:fs';
import { endLeftoverGroup, type ProcessGroupRecord } from '../process/process';

/** Temp file and rename: a reader (or a crash) never sees half of it. */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  await fs.writeFile(temp, text);
  await fs.rename(temp, file);
}

/** Ends the process group a crashed try left running (recorded in `pidPath`), then forgets it. */
export async function endLeftover(pidPath: string): Promise<void> {
  const text = await fs.readFile(pidPath, 'utf8').catch(() => null);
  if (text === null) return;
  try {
    const record = JSON.parse(text) as ProcessGroupRecord;
    if (Number.isInteger(record.pgid) && record.pgid > 1) await endLeftoverGroup(record);
  } catch {
    // An unreadable record (crash while writing it) names no process to end.
  }
  await fs.rm(pidPath, { force: true });
}

/** The first `max` bytes of the file; null when it does not exist. */
export async function readHead(file: string, max: number): Promise<string | null> {
  const handle = await fs.open(file, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The last `max` bytes of the file, never before `from`. */
export async function readTail(file: string, max: number, from: number): Promise<string> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const start = Math.max(from, size - max);
    const buf = Buffer.alloc(Math.max(0, size - start));
    await handle.read(buf, 0, buf.length, start);
    return buf.toString('utf8');
  } finally {
    await handle.close();
  }
}
