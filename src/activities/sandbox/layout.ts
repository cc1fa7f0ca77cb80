/**
 * What one confined process sees, worked out from the host: what is hidden (the saga home, credential
 * files), read-only (the repository, the program) and writable (its worktree, its CLI's state, caches).
 */
import { existsSync, promises as fs, readdirSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isWorkerSecret } from '../../domain/config/agent-env';
import { homeProblem } from '../../domain/config/trust';
import { SandboxUnavailableError } from './detect';
import type { Endpoint, SandboxLayout, SandboxMode } from '../../domain/config/sandbox';

/** Folders and files under the worker's home that hold credentials no confined process may read. */
const CREDENTIAL_PATHS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.config/temporalio',
  '.docker',
  '.kube',
  '.netrc',
  '.git-credentials',
];

/** Package-manager caches under $HOME that builds, set-up commands and agents write (when they exist). */
const CACHE_PATHS = [
  '.npm',
  '.cache',
  '.yarn',
  '.local/share/pnpm',
  '.cargo/registry',
  'go/pkg/mod',
  '.m2/repository',
];

/** What to confine: one process and what it may touch. */
export interface ConfineRequest {
  mode: SandboxMode;
  argv: string[];
  /** Working directory, writable. */
  cwd: string;
  /** The process's environment (its HOME and PATH decide what else it sees). */
  env: Record<string, string>;
  /** The saga home: absent inside, but for the files below (the worker's default one is hidden too). */
  sagaHome?: string;
  /** Readable files inside hidden areas (the prompt). */
  readableFiles?: string[];
  /** Writable files (the report file); created empty when missing. */
  writableFiles?: string[];
  /** The CLI's own state under $HOME (relative paths), writable; folders are created when missing. */
  stateFiles?: string[];
  /** Host:port pairs the process may connect to. */
  network?: Endpoint[];
}

export const inside = (parent: string, child: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

export async function layoutFor(request: ConfineRequest, program: string): Promise<SandboxLayout> {
  const workerHome = os.homedir();
  const home = request.env.HOME || workerHome;
  const hiddenDirs: string[] = [];
  const hiddenFiles: string[] = [];
  // Hidden even under /tmp (the sandbox's own /tmp is fresh, but a view of a repository or worktree under
  // the host's /tmp would show what lies inside it; and a saga home there holds the run's own files).
  const hide = async (p: string) => {
    const stat = await fs.stat(p).catch(() => null);
    if (stat) (stat.isDirectory() ? hiddenDirs : hiddenFiles).push(p);
  };
  // The worker's saga home as configured, and the one this run belongs to.
  for (const home of new Set([request.sagaHome, process.env.SAGA_HOME, path.join(workerHome, '.sagas')])) {
    if (home) await hide(home);
  }
  for (const rel of CREDENTIAL_PATHS) await hide(path.join(workerHome, rel));
  // Files the worker's own settings name: TLS keys, Temporal profiles, webhook caller files.
  for (const [name, value] of Object.entries(process.env)) {
    if (value && isWorkerSecret(name) && path.isAbsolute(value)) await hide(value);
  }
  const hidden = (p: string) => [...hiddenDirs, ...hiddenFiles].some((h) => inside(h, p));

  const readOnly: string[] = [];
  const repo = await repositoryOf(request.cwd);
  if (repo) readOnly.push(...repo.views);
  // The program, and the scripts and files its arguments and environment name, where /tmp hides them;
  // a link there (a CLI on PATH) brings the package or virtualenv it points into.
  const showFromTmp = (p: string, itself = true) => {
    if (!path.isAbsolute(p) || !inside('/tmp', p) || hidden(p)) return;
    if (itself) readOnly.push(p);
    const root = installRoot(realPath(p));
    if (root !== p && inside('/tmp', root) && root !== '/tmp' && !hidden(root)) readOnly.push(root);
  };
  for (const candidate of [program, ...request.argv.slice(1), ...Object.values(request.env)]) {
    if (isFile(candidate)) showFromTmp(candidate);
  }
  for (const dir of (request.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir) || !inside('/tmp', dir) || !existsSync(dir)) continue;
    showFromTmp(dir);
    for (const entry of listDir(dir).slice(0, PATH_ENTRIES_MAX)) showFromTmp(path.join(dir, entry), false);
  }
  const runFiles = {
    readable: (request.readableFiles ?? []).filter((f) => existsSync(f)),
    writable: [] as string[],
  };
  for (const file of request.writableFiles ?? []) {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.appendFile(file, '');
    runFiles.writable.push(file);
  }

  // A HOME of its own is bound writable: never one holding the host's home, a saga home or the repository.
  const homeRefused = homeProblem(path.resolve(home), {
    userHome: workerHome,
    sagaHomes: [request.sagaHome, process.env.SAGA_HOME, path.join(workerHome, '.sagas')].filter(
      (h): h is string => Boolean(h),
    ),
    repos: [request.cwd, ...(repo?.views ?? [])],
  });
  if (homeRefused) throw new SandboxUnavailableError(`its HOME ${home} ${homeRefused}; refused`);
  const writable: string[] = [];
  if (path.resolve(home) !== path.resolve(workerHome) && !hidden(home)) {
    // A home of the agent's own (the profile's HOME): all of it is the CLI's state.
    await fs.mkdir(home, { recursive: true });
    writable.push(home);
  } else {
    for (const rel of request.stateFiles ?? []) {
      const p = path.join(home, rel);
      if (!existsSync(p) && !path.extname(p)) await fs.mkdir(p, { recursive: true });
      if (existsSync(p)) writable.push(p);
    }
  }
  for (const rel of CACHE_PATHS) {
    const p = path.join(home, rel);
    if (existsSync(p) && !hidden(p)) writable.push(p);
  }
  return {
    cwd: request.cwd,
    hiddenDirs,
    hiddenFiles,
    readOnly: [...new Set(readOnly)],
    writable,
    runFiles,
    readOnlyOver: repo?.pointer ? [repo.pointer] : [],
    network: null,
  };
}

/** Entries of one PATH folder under /tmp whose link targets are shown (a tools folder, not a system one). */
const PATH_ENTRIES_MAX = 64;

const realPath = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

const listDir = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

/**
 * Where an installed program's files live: the folder holding the `node_modules` it is in (its
 * dependencies are hoisted there), or the virtualenv it belongs to; else the path itself.
 */
export function installRoot(real: string): string {
  const parts = real.split(path.sep);
  const modules = parts.indexOf('node_modules');
  if (modules > 1) return parts.slice(0, modules).join(path.sep);
  for (let dir = path.dirname(real); dir !== path.dirname(dir); dir = path.dirname(dir))
    if (existsSync(path.join(dir, 'pyvenv.cfg'))) return dir;
  return real;
}

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/**
 * The repository a working directory belongs to: what must stay readable (its main checkout, or its git
 * dir when that lives elsewhere) and the worktree's `.git` pointer file, which must stay as saga made it.
 */
async function repositoryOf(cwd: string): Promise<{ views: string[]; pointer: string | null } | null> {
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, '.git');
    const stat = await fs.lstat(dotGit).catch(() => null);
    if (stat?.isDirectory()) return { views: [dir], pointer: dotGit };
    if (stat?.isFile()) {
      const text = await fs.readFile(dotGit, 'utf8');
      const admin = path.resolve(dir, /^gitdir:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? '.');
      const commonText = await fs.readFile(path.join(admin, 'commondir'), 'utf8').catch(() => null);
      const common = commonText ? path.resolve(admin, commonText.trim()) : admin;
      const top = path.basename(common) === '.git' ? path.dirname(common) : common;
      return { views: [top, ...(inside(top, admin) ? [] : [admin])], pointer: dotGit };
    }
    if (path.dirname(dir) === dir) return null;
  }
}
