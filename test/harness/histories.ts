/**
 * Recorded workflow histories, kept per released version (test/fixtures/histories/<version>/<workflowType>.json)
 * so the replay test guards the sagas still running on every release we keep (README: Versioning). A kept
 * history is never re-recorded: `RECORD_HISTORIES=1` writes only into the folder of the version in
 * package.json (bumped at each release that changes workflow code), and only histories it does not have yet.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';

type History = ReturnType<typeof historyFromJSON>;

export const HISTORIES_DIR = path.resolve(__dirname, '..', 'fixtures', 'histories');
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;

const versionParts = (v: string): number[] => v.split('.').map(Number);
/** Semver order of plain `MAJOR.MINOR.PATCH` versions. */
export const compareVersions = (a: string, b: string): number => {
  const [pa, pb] = [versionParts(a), versionParts(b)];
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
};

/** The versions whose histories are kept, oldest first. */
export const keptVersions = (): string[] =>
  readdirSync(HISTORIES_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^\d+\.\d+\.\d+$/.test(e.name))
    .map((e) => e.name)
    .sort(compareVersions);

export const historyFile = (version: string, workflowType: string): string =>
  path.join(HISTORIES_DIR, version, `${workflowType}.json`);

/** Every kept history of `version`, by workflow type. */
export function keptHistories(version: string): { workflowType: string; file: string }[] {
  return readdirSync(path.join(HISTORIES_DIR, version))
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ workflowType: f.replace(/\.json$/, ''), file: path.join(HISTORIES_DIR, version, f) }));
}

export const loadHistory = (file: string): History =>
  historyFromJSON(JSON.parse(readFileSync(file, 'utf8')) as unknown);

/** The newest kept history of a workflow type. */
export function latestHistoryFile(workflowType: string): string {
  const version = keptVersions()
    .reverse()
    .find((v) => existsSync(historyFile(v, workflowType)));
  if (!version) throw new Error(`No kept history of ${workflowType} under ${HISTORIES_DIR}`);
  return historyFile(version, workflowType);
}

/** With RECORD_HISTORIES=1: keep `history` as this version's history of `workflowType`. */
export function recordHistory(workflowType: string, history: History): void {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const file = historyFile(PACKAGE_VERSION, workflowType);
  // A kept history stays as recorded; to record this unreleased version's again, delete its file first.
  if (existsSync(file)) throw new Error(`${file} is kept already: histories are never re-recorded`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${historyToJSON(history)}\n`);
}

export const CURRENT_VERSION = PACKAGE_VERSION;
