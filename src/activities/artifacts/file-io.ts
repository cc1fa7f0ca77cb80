/** The saga directory's two file primitives: atomic writes, and read-modify-write serialised per file. */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, promises as fs } from 'node:fs';
import * as path from 'node:path';

/** Write `text` to `file` atomically; returns false when the file already held exactly this text. */
export async function writeFileAtomic(file: string, text: string): Promise<boolean> {
  const stat = await fs.lstat(file).catch(() => null);
  if (stat?.isFile() && (await fs.readFile(file, 'utf8')) === text) return false;
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // The saga's record holds prompts, transcripts and answers: its owner's only.
    const handle = await fs.open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  // Make the rename itself durable; some platforms cannot open directories, which is fine to skip.
  const dirHandle = await fs.open(dir, 'r').catch(() => null);
  if (dirHandle)
    await dirHandle
      .sync()
      .catch(() => undefined)
      .finally(() => dirHandle.close());
  return true;
}

/**
 * A folder of saga's own (the saga home, a saga directory, the dev server's data) that only its owner can
 * read: created 0700, and made so if an older version created it open to every local user. A folder of
 * someone else's (EPERM) is left as it is.
 */
export async function makePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.chmod(dir, 0o700).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPERM') throw error;
  });
}

/** makePrivateDir, for the CLI's synchronous start-up. */
export function makePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}

/**
 * Read-modify-write of one file (manifest.md, decisions.md) is serialised within this worker: the saga and its
 * child workflows write the same files from concurrent activities, and must not drop each other's entries.
 */
const fileLocks = new Map<string, Promise<void>>();
export async function lockFile(file: string): Promise<() => void> {
  const previous = fileLocks.get(file) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  fileLocks.set(file, tail);
  await previous;
  return () => {
    release();
    if (fileLocks.get(file) === tail) fileLocks.delete(file);
  };
}
