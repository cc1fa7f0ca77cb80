/** Paths on disk and lists of paths as git prints them; no git runs here. */
import { cappedList } from '../../domain/text/caps';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export const pathExists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

/** Real path when it exists (so /tmp symlinks compare equal), else the resolved path. */
export const canonical = (p: string) => fs.realpath(p).catch(() => path.resolve(p));

/**
 * The first paths within the list cap (count and bytes), for results that also carry the full count: at most
 * this many travel in an activity result or failure, so payloads stay far below Temporal's 2 MB.
 */
export const listedPaths = (paths: string[]): string[] => cappedList(paths);

/** A few paths for a one-line message, with how many more there are. */
export function samplePaths(paths: string[], shown = 5): string {
  const more = paths.length > shown ? ` and ${paths.length - shown} more` : '';
  return `${paths.slice(0, shown).join(', ')}${more}`;
}

/** `./.env/` → `.env`: a `worktree.copy` entry in the form git prints paths. */
export const copyEntryPath = (entry: string) =>
  entry
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');

/** Whether `file` (as git prints it) is a `worktree.copy` entry or inside one. */
export function matchesCopyEntry(file: string, entries: readonly string[]): boolean {
  return entries.some((entry) => {
    const e = copyEntryPath(entry);
    return e !== '' && (file === e || file.startsWith(`${e}/`));
  });
}
