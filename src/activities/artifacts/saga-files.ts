/**
 * Reading and writing files of one saga directory. Every path stays inside the saga directory, and the saga
 * directory inside the saga home: `..`, absolute paths and symlinks leading out are refused with a
 * non-retryable failure, since retrying cannot fix them.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { makePrivateDir, writeFileAtomic } from './file-io';

/** Failure type of every refused path (non-retryable). */
export const PATH_ERROR = 'SagaPathError';
/** Failure type of input that cannot be written as asked (invalid plan, broken manifest...). */
export const ARTIFACT_INPUT_ERROR = 'SagaArtifactInputError';
const DEFAULT_MAX_READ_BYTES = 1024 * 1024;

const refuse = (message: string): ApplicationFailure => ApplicationFailure.nonRetryable(message, PATH_ERROR);
export const badInput = (message: string): ApplicationFailure =>
  ApplicationFailure.nonRetryable(message, ARTIFACT_INPUT_ERROR);

/** Strictly below `parent` (never equal), by path arithmetic only. */
export function isBelow(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
const isAtOrBelow = (parent: string, child: string): boolean => parent === child || isBelow(parent, child);

/** Real path of the nearest existing ancestor (or the path itself): where a mkdir would actually land. */
async function realExistingAncestor(p: string): Promise<string> {
  for (let current = p; ; current = path.dirname(current)) {
    try {
      return await fs.realpath(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(current) === current) throw err;
    }
  }
}

export function checkRelPath(relPath: string): void {
  if (typeof relPath !== 'string' || relPath.trim() === '') throw refuse('Artifact path is empty.');
  if (relPath.includes('\0')) throw refuse(`Artifact path ${JSON.stringify(relPath)} contains a NUL byte.`);
  if (path.isAbsolute(relPath) || /^[a-zA-Z]:/.test(relPath) || relPath.startsWith('\\')) {
    throw refuse(`Artifact path '${relPath}' is absolute; give a path relative to the saga directory.`);
  }
  if (relPath.split(/[\\/]+/).includes('..')) {
    throw refuse(`Artifact path '${relPath}' contains '..'; artifacts must stay inside the saga directory.`);
  }
}

/** The files of the saga directories under one saga home. */
export interface SagaFiles {
  /** The saga home, resolved. */
  home: string;
  /**
   * The real saga directory after checking it cannot lead out of the saga home. With `create` it is made
   * when missing; without, a missing directory gives null.
   */
  sagaRoot(sagaDir: string, create: boolean): Promise<string | null>;
  /** Writes `text` atomically at `relPath` (folders created as needed); returns `relPath`. */
  write(sagaDir: string, relPath: string, text: string): Promise<string>;
  /** The file's text, null when it (or the saga directory) does not exist; over `maxBytes` is refused. */
  read(sagaDir: string, relPath: string, maxBytes?: number): Promise<string | null>;
}

export function createSagaFiles(sagaHome: string): SagaFiles {
  const home = path.resolve(sagaHome);

  async function sagaRoot(sagaDir: string, create: boolean): Promise<string | null> {
    if (typeof sagaDir !== 'string' || !path.isAbsolute(sagaDir)) {
      throw refuse(`Saga directory '${sagaDir}' must be an absolute path inside the saga home ${home}.`);
    }
    const resolved = path.resolve(sagaDir);
    if (!isBelow(home, resolved))
      throw refuse(`Saga directory '${sagaDir}' is not inside the saga home ${home}.`);
    const escape = () =>
      refuse(`Saga directory '${sagaDir}' leads out of the saga home ${home} through a symlink.`);
    if (create) await makePrivateDir(home);
    const realHome = await fs.realpath(home).catch(() => null);
    if (realHome === null) return null;
    if (!isAtOrBelow(realHome, await realExistingAncestor(resolved))) throw escape();
    if (create) await fs.mkdir(resolved, { recursive: true, mode: 0o700 });
    const real = await fs.realpath(resolved).catch(() => null);
    if (real !== null && !isBelow(realHome, real)) throw escape();
    // Made private once it is known to be inside the home (a symlink is never followed out to chmod).
    if (create && real !== null) await makePrivateDir(real);
    return real;
  }

  /** Absolute path of `relPath` inside the saga directory (parent folder created safely when writing). */
  async function artifactPath(sagaDir: string, relPath: string, create: boolean) {
    checkRelPath(relPath);
    const root = await sagaRoot(sagaDir, create);
    if (root === null) return null;
    const target = path.join(root, relPath);
    if (!isBelow(root, target))
      throw refuse(`Artifact path '${relPath}' does not name a file inside ${sagaDir}.`);
    const parent = path.dirname(target);
    const escape = () => refuse(`Artifact path '${relPath}' leads out of ${sagaDir} through a symlink.`);
    if (!isAtOrBelow(root, await realExistingAncestor(parent))) throw escape();
    if (create) {
      await fs.mkdir(parent, { recursive: true });
      if (!isAtOrBelow(root, await fs.realpath(parent))) throw escape();
    }
    return { root, target };
  }

  async function write(sagaDir: string, relPath: string, text: string): Promise<string> {
    const { target } = (await artifactPath(sagaDir, relPath, true))!;
    await writeFileAtomic(target, text);
    return relPath;
  }

  async function read(
    sagaDir: string,
    relPath: string,
    maxBytes = DEFAULT_MAX_READ_BYTES,
  ): Promise<string | null> {
    const resolved = await artifactPath(sagaDir, relPath, false);
    if (resolved === null) return null;
    const real = await fs.realpath(resolved.target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (real === null) return null;
    if (!isBelow(resolved.root, real))
      throw refuse(`Artifact '${relPath}' leads out of ${sagaDir} through a symlink.`);
    const { size } = await fs.stat(real);
    if (size > maxBytes) {
      throw badInput(
        `Artifact '${relPath}' is ${size} bytes, over the ${maxBytes}-byte limit for reading it back.`,
      );
    }
    return fs.readFile(real, 'utf8');
  }

  return { home, sagaRoot, write, read };
}
