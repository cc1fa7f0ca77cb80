/**
 * What one confined process sees, worked out from the host: what is hidden (the saga home, credential
 * files, the agent CLIs' state), read-only (the repository, the program, the rest of $HOME) and writable
 * (its worktree, and the saga's private copies of its CLI's state and of the package caches).
 */
import { existsSync, promises as fs, readdirSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isWorkerSecret } from '../../domain/config/agent-env';
import { AGENT_PRESETS } from '../../domain/config/agent-presets';
import { homeProblem } from '../../domain/config/trust';
import { SandboxUnavailableError } from './detect';
import type { Endpoint, SandboxMode } from '../../domain/config/sandbox';
import type { SandboxLayout } from './bwrap-args';
import { privateState, safeName } from './private-home';

export { privateHomeOf } from './private-home';

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
  /**
   * The saga's private home on the host (inside the hidden saga home, see `privateHomeOf`): the package
   * caches and each profile's CLI state live there and are shown at their usual places under $HOME.
   * Absent (a run that belongs to no saga): the caches are empty scratch folders that end with the run.
   */
  privateHome?: string;
  /** Whose CLI state this is (the profile's name): one private copy per saga and profile. */
  stateKey?: string;
  /** The CLI's own state under $HOME (relative paths), writable as the saga's private copy. */
  stateFiles?: string[];
  /** Its config under $HOME, copied into the private state when that is made (settings, MCP, hooks...). */
  configFiles?: string[];
  /** Its credentials under $HOME: the user's own files, shown read-only over the private state. */
  loginFiles?: string[];
  /** Host:port pairs the process may connect to. */
  network?: Endpoint[];
}

export const inside = (parent: string, child: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

export async function layoutFor(request: ConfineRequest, program: string): Promise<SandboxLayout> {
  // As the agent's environment takes it (HOME first), so the two never disagree about whose home this is.
  const workerHome = process.env.HOME || os.homedir();
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
  // The program's folder and its script's (the modules beside them), unless that folder holds what stays
  // hidden or writable, or is /tmp itself: then the file alone, as above.
  const guarded = [...hiddenDirs, ...hiddenFiles, request.cwd, ...(repo?.views ?? []), home, workerHome];
  for (const file of [program, request.argv.slice(1).find(isFile)]) {
    const dir = file && path.dirname(file);
    if (dir && dir !== '/tmp' && !guarded.some((g) => inside(dir, g))) showFromTmp(dir);
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
  const binds: { source: string; dest: string; readOnly: boolean }[] = [];
  const scratch: string[] = [];
  const ownHome = path.resolve(home) !== path.resolve(workerHome) && !hidden(home);
  if (ownHome) {
    // A home of the agent's own (the profile's HOME): all of it is the CLI's state.
    await fs.mkdir(home, { recursive: true });
    writable.push(home);
  }
  // Nothing under the user's home that their own, unconfined tools read later is writable: package caches
  // and the CLI's state are the saga's private copies, shown at the same paths (so HOME, and every tool
  // installed under it, stays as it is), and other CLIs' state and credentials are hidden.
  const privateCaches: string[] = [];
  // Copies of the user's CLI config are kept there: theirs alone, like their home.
  if (request.privateHome && !existsSync(request.privateHome)) {
    await fs.mkdir(request.privateHome, { recursive: true, mode: 0o700 });
  }
  for (const rel of CACHE_PATHS) {
    const p = path.join(home, rel);
    if (ownHome || !existsSync(p) || hidden(p)) continue;
    if (request.privateHome) {
      const source = path.join(request.privateHome, 'caches', rel);
      if (!existsSync(source)) await fs.mkdir(source, { recursive: true });
      binds.push({ source, dest: p, readOnly: false });
    } else {
      scratch.push(p);
    }
    privateCaches.push(p);
  }
  const own = new Set<string>();
  if (!ownHome && request.privateHome && request.stateKey && request.stateFiles?.length) {
    const stateRoot = path.join(request.privateHome, 'agents', safeName(request.stateKey));
    for (const rel of request.stateFiles) {
      const dest = path.join(home, rel);
      if (hidden(dest)) continue;
      const source = await privateState(stateRoot, home, rel, request.configFiles ?? []);
      if (!source) continue;
      // A folder's mount point: under a private cache it is made in the bind, else in the real home.
      if (!existsSync(dest) && !privateCaches.some((c) => inside(c, dest))) {
        await fs.mkdir(dest, { recursive: true });
      }
      binds.push({ source, dest, readOnly: false });
      own.add(dest);
    }
    for (const rel of request.loginFiles ?? []) {
      const real = path.join(home, rel);
      own.add(real);
      if ([...own].some((o) => o !== real && inside(o, real)) && isFile(real)) {
        binds.push({ source: real, dest: real, readOnly: true });
      }
    }
  }
  // Every agent CLI's state and credentials in the worker's home, but what this run's own CLI uses.
  for (const preset of Object.values(AGENT_PRESETS)) {
    for (const rel of [...(preset.stateFiles ?? []), ...(preset.cli?.loginFiles ?? [])]) {
      const p = path.join(workerHome, rel);
      const covered = [...own, ...privateCaches].some((o) => inside(o, p) || inside(p, o));
      // Synchronous: a stat takes microseconds, a round trip through the thread pool far longer.
      const stat = covered || hidden(p) ? undefined : statSync(p, { throwIfNoEntry: false });
      if (stat) (stat.isDirectory() ? hiddenDirs : hiddenFiles).push(p);
    }
  }
  return {
    cwd: request.cwd,
    hiddenDirs,
    hiddenFiles,
    readOnly: [...new Set(readOnly)],
    writable,
    binds,
    scratch,
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
