/**
 * The saga's private home: its copies of an agent CLI's state and of the package caches, kept in the saga's
 * own folder (hidden from every sandbox) and shown at their usual places under $HOME.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

/** Where a saga keeps its private home: in its own folder, which confined processes never see. */
export const privateHomeOf = (sagaDir: string): string => path.join(sagaDir, '.home');

export const safeName = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || '_';

/**
 * The private copy of one state path (`rel` under `home`), made the first time a saga's profile runs: a
 * folder gets the user's config files that lie in it (settings, MCP servers, hooks, plugins, instructions:
 * the user's own choices, which the CLI then reads inside the sandbox), a file (`.claude.json`) is copied
 * whole. From then on it is the saga's own, kept across its runs (so sessions resume) and never copied
 * back. Made aside and renamed into place, so runs starting together see it whole. Null: a file the user
 * does not have (no mount point for it).
 */
export async function privateState(
  stateRoot: string,
  home: string,
  rel: string,
  configFiles: string[],
): Promise<string | null> {
  const target = path.join(stateRoot, rel);
  if (existsSync(target)) return target;
  const real = path.join(home, rel);
  const realStat = await fs.stat(real).catch(() => null);
  const isDir = realStat ? realStat.isDirectory() : !path.extname(rel);
  if (!isDir && !realStat?.isFile()) return null;
  await fs.mkdir(path.dirname(target), { recursive: true });
  const scratchCopy = `${target}.new-${randomBytes(6).toString('hex')}`;
  try {
    if (isDir) {
      await fs.mkdir(scratchCopy);
      for (const config of configFiles) {
        const from = path.join(home, config);
        const within = path.relative(real, from);
        if (within.startsWith('..') || path.isAbsolute(within) || !existsSync(from)) continue;
        const to = path.join(scratchCopy, within);
        await fs.mkdir(path.dirname(to), { recursive: true });
        // Links are followed: the copy never points back into the user's files.
        await fs.cp(from, to, { recursive: true, force: false, errorOnExist: false, dereference: true });
      }
    } else {
      await fs.copyFile(real, scratchCopy);
    }
    // A link never replaces a file another run made first (and may have written since); a folder is
    // renamed only over an empty one.
    await (isDir ? fs.rename(scratchCopy, target) : fs.link(scratchCopy, target)).catch((error: unknown) => {
      if (!existsSync(target)) throw error;
    });
  } finally {
    await fs.rm(scratchCopy, { recursive: true, force: true });
  }
  return target;
}
