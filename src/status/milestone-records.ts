/**
 * A status with its integrated milestones' task states put back from their record files
 * (domain/saga/milestone-records.ts), so `saga status --json`, the board, PROGRESS.md and REPORT.md show
 * every task as before. A record this reader cannot read (another host's saga directory, a file removed)
 * leaves the milestone as the saga keeps it: its line, its `record` and the tasks that did not land.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { expandMilestone, readMilestoneRecord, type MilestoneRecord } from '../domain/saga/milestone-records';
import { milestoneRecordFile } from '../domain/contract/saga-dir';
import type { MilestoneState, SagaStatus } from '../domain/contract/state';

/** Records never change once written: kept per file while its size and time stay the same. */
const cache = new Map<string, { stamp: string; record: MilestoneRecord }>();
const CACHE_FILES = 2_000;

async function readRecord(file: string): Promise<MilestoneRecord | null> {
  const stat = await fs.stat(file).catch(() => null);
  if (!stat?.isFile()) return null;
  const stamp = `${stat.size}:${stat.mtimeMs}`;
  const hit = cache.get(file);
  if (hit?.stamp === stamp) return hit.record;
  const record = readMilestoneRecord(JSON.parse(await fs.readFile(file, 'utf8').catch(() => 'null')));
  if (!record) return null;
  if (cache.size >= CACHE_FILES) cache.delete(cache.keys().next().value!);
  cache.set(file, { stamp, record });
  return record;
}

async function expanded(sagaDir: string, m: MilestoneState, unmarked = false): Promise<MilestoneState> {
  const file = m.record?.file ?? (unmarked ? milestoneRecordFile(m.id) : null);
  if (!file) return m;
  const record = await readRecord(path.join(sagaDir, file)).catch(() => null);
  return record && record.milestone === m.id ? expandMilestone(m, record) : m;
}

/**
 * `unmarked`: also a milestone the state does not mark as recorded whose record file was written since (the
 * state a run started from, read back while the run is still going).
 */
export async function withMilestoneRecords<S extends Pick<SagaStatus, 'sagaDir' | 'milestones'>>(
  status: S,
  { unmarked = false }: { unmarked?: boolean } = {},
): Promise<S> {
  if (!unmarked && !status.milestones.some((m) => m.record)) return status;
  const milestones = await Promise.all(status.milestones.map((m) => expanded(status.sagaDir, m, unmarked)));
  return { ...status, milestones };
}
