/**
 * What narrows every confined process beyond its view of the files and the network: the seccomp program
 * (handed to bwrap on a descriptor), an unprivileged uid inside when the worker is root, per-process limits
 * (prlimit, when installed) and, for a root worker, the host's root-only secrets hidden (inside a user
 * namespace a root worker's sandbox still maps to real root, so file modes alone do not keep it out).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { encodeProgram, seccompProgram } from './seccomp';
import { DEFAULT_LIMITS, UNPRIVILEGED_ID, type SandboxHardening, type SandboxLayout } from './bwrap-args';
import type { SandboxTool } from './detect';

/** The descriptor bwrap reads the seccomp program from: the first after stdin, stdout and stderr. */
export const SECCOMP_FD = 3;

let program: Buffer | null = null;

/** The compiled seccomp program for this machine, or null where it has none (not x86_64 or arm64). */
export function seccompBytes(): Buffer | null {
  if (process.arch !== 'x64' && process.arch !== 'arm64') return null;
  program ??= encodeProgram(seccompProgram());
  return program;
}

/** Files only root may read that a root worker's sandbox would otherwise read: password hashes, host keys,
 * TLS private keys. */
const ROOT_SECRETS = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/ssl/private'];

let rootSecrets: { files: string[]; dirs: string[] } | null = null;

function rootOnlySecrets(): { files: string[]; dirs: string[] } {
  if (rootSecrets) return rootSecrets;
  const found = { files: [] as string[], dirs: [] as string[] };
  for (const p of ROOT_SECRETS) {
    if (existsSync(p)) (p === '/etc/ssl/private' ? found.dirs : found.files).push(p);
  }
  try {
    for (const name of readdirSync('/etc/ssh')) {
      if (/^ssh_host_.*_key$/.test(name)) found.files.push(path.join('/etc/ssh', name));
    }
  } catch {
    // no ssh server keys here
  }
  rootSecrets = found;
  return found;
}

/** The hardening of a confined process run by this worker, with `layout` extended to hide root's secrets
 * when the worker is root. */
export function hardeningFor(
  tool: SandboxTool,
  layout: SandboxLayout,
): { hardening: SandboxHardening; seccomp: Buffer | null } {
  const root = process.getuid?.() === 0;
  if (root) {
    const secrets = rootOnlySecrets();
    layout.hiddenFiles.push(...secrets.files.filter((f) => !layout.hiddenFiles.includes(f)));
    layout.hiddenDirs.push(...secrets.dirs.filter((d) => !layout.hiddenDirs.includes(d)));
  }
  const seccomp = seccompBytes();
  return {
    hardening: {
      bwrap: tool.path,
      seccompFd: seccomp ? SECCOMP_FD : null,
      disableUserns: tool.disableUserns,
      uid: root ? UNPRIVILEGED_ID : null,
      limits: tool.prlimit ? { prlimit: tool.prlimit, ...DEFAULT_LIMITS } : null,
      setpriv: tool.setpriv,
    },
    seccomp,
  };
}
