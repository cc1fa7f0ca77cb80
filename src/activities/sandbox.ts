/**
 * Confines a process saga starts for an agent, a check or a set-up command (issue 29) with bubblewrap:
 * its own PID namespace (nothing else of the host visible; everything it starts dies with the run), its
 * working directory and the files it must write writable, the repository and the rest of the host
 * read-only, the saga home and the worker's credential files absent, and no network but the allow-listed
 * host:port pairs, each forwarded through a socket of this worker (so the Temporal server, the chat bridge
 * and every other local service stay out of reach).
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fs, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isWorkerSecret } from '../domain/agent-env';
import {
  bwrapArguments,
  hostsFile,
  networkEntryScript,
  networkRoutes,
  parseEndpoint,
  type CommandSandbox,
  type Endpoint,
  type NetworkRoute,
  type SandboxLayout,
  type SandboxMode,
} from '../domain/sandbox';
import { runProcess, SpawnError, type RunProcessOptions, type RunProcessResult } from './process';

const run = promisify(execFile);

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

export interface SandboxTool {
  tool: 'bubblewrap';
  path: string;
  version: string;
  /** socat, which forwards allow-listed endpoints into the sandbox; null when missing. */
  socat: string | null;
}

/** Why no sandbox can run here, with what to do about it. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

const onPath = (program: string, searchPath = process.env.PATH ?? ''): string | null => {
  if (program.includes('/')) return existsSync(program) ? program : null;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
};

let detected: Promise<SandboxTool> | null = null;

/**
 * The sandbox tool of this machine, checked once per process by running it (a kernel without
 * unprivileged namespaces fails here, not mid-saga). Rejects with SandboxUnavailableError saying why.
 */
export function detectSandbox(): Promise<SandboxTool> {
  detected ??= (async () => {
    if (process.platform !== 'linux') {
      throw new SandboxUnavailableError(
        `no sandbox for ${process.platform} yet (saga confines agents with bubblewrap on Linux); ` +
          'set `sandbox: none` in saga.config.yaml to run agents unconfined',
      );
    }
    const bwrap = process.env.SAGA_BWRAP || onPath('bwrap');
    if (!bwrap) {
      throw new SandboxUnavailableError(
        'bubblewrap (bwrap) is not installed: `sudo apt-get install bubblewrap socat` (or your ' +
          "distribution's package), or set `sandbox: none` in saga.config.yaml to run agents unconfined",
      );
    }
    let version: string;
    try {
      version = (await run(bwrap, ['--version'])).stdout.trim().replace(/^bubblewrap\s*/, '');
      await run(bwrap, [
        '--unshare-all',
        '--die-with-parent',
        '--ro-bind',
        '/',
        '/',
        '--proc',
        '/proc',
        '--',
        'true',
      ]);
    } catch (err) {
      const said = ((err as { stderr?: string }).stderr || (err as Error).message).trim();
      throw new SandboxUnavailableError(
        `bubblewrap at ${bwrap} cannot create namespaces here (${said}); allow unprivileged user ` +
          'namespaces (kernel.unprivileged_userns_clone=1) or set `sandbox: none` in saga.config.yaml',
      );
    }
    return { tool: 'bubblewrap', path: bwrap, version, socat: onPath('socat') };
  })();
  detected.catch(() => (detected = null)); // a later install is seen without restarting the worker
  return detected;
}

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

export interface Confined {
  argv: string[];
  env: Record<string, string>;
  confined: boolean;
  close(): Promise<void>;
}

const inside = (parent: string, child: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** The argv and environment that run `request` confined (or as it is, with `mode: none`). */
export async function confine(request: ConfineRequest): Promise<Confined> {
  const program = onPath(request.argv[0] ?? '', request.env.PATH);
  if (!program) {
    // As spawn would say it, so a missing agent CLI is still reported as not installed.
    throw new SpawnError(
      `Cannot run '${request.argv[0]}': command not found (ENOENT); is it installed and on PATH?`,
      'ENOENT',
    );
  }
  if (request.mode === 'none') {
    return { argv: request.argv, env: request.env, confined: false, close: async () => undefined };
  }
  const tool = await detectSandbox();
  const routes = networkRoutes(request.network ?? []);
  if (routes.length > 0 && !tool.socat) {
    throw new SandboxUnavailableError(
      `socat is not installed, so the allowed endpoints (${routes.map((r) => `${r.endpoint.host}:${r.endpoint.port}`).join(', ')}) ` +
        'cannot be reached from the sandbox: `sudo apt-get install socat`',
    );
  }
  const layout = await layoutFor(request, program);
  const bridge = routes.length > 0 ? await startNetworkBridge(routes, tool.socat!) : null;
  layout.network = bridge
    ? { dir: bridge.dir, hosts: bridge.hosts, lowPorts: routes.some((r) => r.endpoint.port < 1024) }
    : null;
  return {
    argv: [tool.path, ...bwrapArguments(layout, request.argv, existsSync('/run'))],
    // bwrap itself is visible inside (the namespace's pid 1): it gets only what the process gets.
    env: { ...request.env, TMPDIR: '/tmp' },
    confined: true,
    close: async () => bridge?.close(),
  };
}

async function layoutFor(request: ConfineRequest, program: string): Promise<SandboxLayout> {
  const workerHome = os.homedir();
  const home = request.env.HOME || workerHome;
  const hiddenDirs: string[] = [];
  const hiddenFiles: string[] = [];
  const hide = async (p: string, evenInTmp = false) => {
    const stat = await fs.stat(p).catch(() => null);
    if (!stat || (inside('/tmp', p) && !evenInTmp)) return; // /tmp is a fresh, empty one inside anyway
    (stat.isDirectory() ? hiddenDirs : hiddenFiles).push(p);
  };
  // The worker's saga home as configured, and the one this run belongs to.
  // (Hidden even under /tmp: the run's own files are bound inside it, and the rest must stay unwritable.)
  for (const home of new Set([request.sagaHome, process.env.SAGA_HOME, path.join(workerHome, '.sagas')])) {
    if (home) await hide(home, true);
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
  // The program, and the scripts and files its arguments and environment name, where /tmp hides them.
  for (const candidate of [program, ...request.argv.slice(1), ...Object.values(request.env)]) {
    if (path.isAbsolute(candidate) && inside('/tmp', candidate) && !hidden(candidate) && isFile(candidate)) {
      readOnly.push(candidate);
    }
  }
  for (const dir of (request.env.PATH ?? '').split(path.delimiter)) {
    if (path.isAbsolute(dir) && inside('/tmp', dir) && !hidden(dir) && existsSync(dir)) readOnly.push(dir);
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
    readOnly,
    writable,
    runFiles,
    readOnlyOver: repo?.pointer ? [repo.pointer] : [],
    network: null,
  };
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

/**
 * The worker's end of the allowed endpoints: a Unix socket per route, in a folder bound into the sandbox,
 * each connection forwarded to the route's real host and port (and nowhere else).
 */
async function startNetworkBridge(routes: readonly NetworkRoute[], socat: string) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-net-'));
  const hosts = path.join(dir, 'hosts');
  await fs.writeFile(hosts, hostsFile(routes));
  await fs.writeFile(path.join(dir, 'entry.sh'), networkEntryScript(routes, socat));
  const servers: net.Server[] = [];
  for (const route of routes) {
    const server = net.createServer((inbound) => {
      const outbound = net.connect({ host: route.endpoint.host, port: route.endpoint.port });
      inbound.pipe(outbound).pipe(inbound);
      const end = () => {
        inbound.destroy();
        outbound.destroy();
      };
      inbound.on('error', end).on('close', end);
      outbound.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path.join(dir, route.socket), () => resolve());
    });
    servers.push(server);
  }
  return {
    dir,
    hosts,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** The sandbox of a check, a set-up or a discovery command: its working directory, caches and `network`. */
export function commandSandbox(settings: CommandSandbox, sagaHome?: string): SandboxRequest {
  return { mode: settings.mode, sagaHome, network: settings.network.map(parseEndpoint) };
}

/** What confines one run, besides the command, directory and environment of its process options. */
export type SandboxRequest = Omit<ConfineRequest, 'argv' | 'cwd' | 'env'>;

/** `runProcess` inside the sandbox `request` describes; the network bridge ends with the run. */
export async function runConfined(
  request: SandboxRequest,
  opts: RunProcessOptions,
): Promise<RunProcessResult> {
  const env = Object.fromEntries(
    Object.entries(opts.env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const confined = await confine({ ...request, argv: opts.argv, cwd: opts.cwd, env });
  try {
    const result = await runProcess({ ...opts, argv: confined.argv, env: confined.env });
    // bwrap exits 128 + N when its command died of signal N: report the signal, as an unconfined run would.
    const signal = confined.confined && result.exitCode !== null ? signalOfExit(result.exitCode) : null;
    return signal ? { ...result, exitCode: null, signal } : result;
  } finally {
    await confined.close();
  }
}

function signalOfExit(code: number): NodeJS.Signals | null {
  if (code <= 128) return null;
  const found = Object.entries(os.constants.signals).find(([, n]) => n === code - 128);
  return found ? (found[0] as NodeJS.Signals) : null;
}
