/** What each finished saga cost, kept in its saga directory for later plans' cost estimates. */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  sagaCostRecord,
  SAGA_COST_RECORD_FILE,
  SagaCostRecordSchema,
  type SagaCostRecord,
} from '../../domain/fleet/budget';
import type { SagaStatus } from '../../domain/contract/state';
import type { SagaFiles } from './saga-files';

/** The cost records of the other sagas in this saga home (unreadable ones are skipped: only an estimate). */
export async function earlierCostRecords(files: SagaFiles, sagaDir: string): Promise<SagaCostRecord[]> {
  const own = path.resolve(sagaDir);
  const entries = await fs.readdir(files.home, { withFileTypes: true }).catch(() => []);
  const records: SagaCostRecord[] = [];
  for (const entry of entries) {
    const dir = path.join(files.home, entry.name);
    if (!entry.isDirectory() || entry.name.startsWith('.') || dir === own) continue;
    const text = await files.read(dir, SAGA_COST_RECORD_FILE).catch(() => null);
    if (text === null) continue;
    try {
      const parsed = SagaCostRecordSchema.safeParse(JSON.parse(text));
      if (parsed.success) records.push(parsed.data);
    } catch {
      // not JSON: skipped
    }
  }
  return records;
}

/** At the saga's end (complete or cancelled): what its tasks cost, for later plans' estimates. */
export async function writeCostRecord(files: SagaFiles, sagaDir: string, status: SagaStatus): Promise<void> {
  const existing = await files.read(sagaDir, SAGA_COST_RECORD_FILE).catch(() => null);
  let finishedAt = new Date().toISOString();
  try {
    // A retried write keeps the first time (same input, same bytes).
    if (existing) finishedAt = SagaCostRecordSchema.parse(JSON.parse(existing)).finishedAt;
  } catch {
    // a broken record is replaced
  }
  const record = sagaCostRecord(status, finishedAt);
  await files.write(sagaDir, SAGA_COST_RECORD_FILE, `${JSON.stringify(record, null, 2)}\n`);
}
