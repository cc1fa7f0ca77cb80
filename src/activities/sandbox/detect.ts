/** Which sandbox tool this machine has, checked once per process by running it. */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { onPath } from '../process/on-path';

const run = promisify(execFile);

export interface SandboxTool {
  tool: 'bubblewrap';
  path: string;
  version: string;
  /** socat, which forwards allow-listed endpoints into the sandbox; null when missing. */
  socat: string | null;
  /** Whether this bubblewrap has `--disable-userns` (0.8.0 and later). */
  disableUserns: boolean;
  /** prlimit (util-linux), which sets a confined process's limits; null when missing (no limits). */
  prlimit: string | null;
  /** setpriv (util-linux), needed by a worker not run as root to forward a port below 1024. */
  setpriv: string | null;
}

/** Why no sandbox can run here, with what to do about it. */
export class SandboxUnavailableError extends Error {
  override name = 'SandboxUnavailableError';
}

/** True inside a Docker, Podman or Kubernetes container (their marker files, or PID 1's cgroup). */
export function inContainer(): boolean {
  if (existsSync('/.dockerenv') || existsSync('/run/.containerenv')) return true;
  try {
    return /docker|containerd|kubepods|libpod/.test(readFileSync('/proc/1/cgroup', 'utf8'));
  } catch {
    return false;
  }
}

/**
 * What to do when bubblewrap cannot make its namespaces. In a container the runtime's defaults are what
 * refuse: its seccomp profile (no user namespaces, no mount), AppArmor's docker-default (no mount) and the
 * masked /proc (no new procfs); docker-compose.yml's saga-worker lifts exactly those.
 */
export function namespaceHelp(container: boolean): string {
  return container
    ? 'in a container, run the worker with `--security-opt seccomp=unconfined --security-opt ' +
        'apparmor=unconfined --security-opt systempaths=unconfined` (docker-compose.yml sets them for ' +
        'saga-worker), or set `sandbox: none` in saga.config.yaml to run agents unconfined'
    : 'allow unprivileged user namespaces (kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 also ' +
        'kernel.apparmor_restrict_unprivileged_userns=0) or set `sandbox: none` in saga.config.yaml';
}

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
        `bubblewrap at ${bwrap} cannot create namespaces here (${said}); ${namespaceHelp(inContainer())}`,
      );
    }
    const [major = 0, minor = 0] = version.split('.').map(Number);
    return {
      tool: 'bubblewrap',
      path: bwrap,
      version,
      socat: onPath('socat'),
      disableUserns: major > 0 || minor >= 8,
      prlimit: onPath('prlimit'),
      setpriv: onPath('setpriv'),
    };
  })();
  detected.catch(() => (detected = null)); // a later install is seen without restarting the worker
  return detected;
}
