/**
 * Confines a process saga starts for an agent, a check or a set-up command with bubblewrap:
 * its own PID namespace (nothing else of the host visible; everything it starts dies with the run), its
 * working directory and the files it must write writable, the repository and the rest of the host
 * read-only, the saga home and the worker's credential files absent, and no network but the allow-listed
 * host:port pairs, each forwarded through a socket of this worker (so the Temporal server, the chat bridge
 * and every other local service stay out of reach).
 */
import { existsSync, realpathSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import os from 'node:os';
import { parseEndpoint, type CommandSandbox } from '../../domain/config/sandbox';
import { reservedEndpoints, reservedRoute } from '../../domain/config/trust';
import { sagaHomeOf } from '../../domain/config/saga-home';
import { verifyCommandSandbox } from '../config-verify';
import { runProcess, SpawnError, type RunProcessOptions, type RunProcessResult } from '../process/process';
import { bwrapArguments } from './bwrap-args';
import { onPath } from '../process/on-path';
import { detectSandbox, SandboxUnavailableError } from './detect';
import { hardeningFor } from './hardening';
import { layoutFor, privateHomeOf, type ConfineRequest } from './layout';
import { startNetworkBridge } from './network-bridge';
import { networkRoutes } from './network-routes';
import type { NetworkWatch } from './network-watch';

export { detectSandbox, SandboxUnavailableError, type SandboxTool } from './detect';
export { privateHomeOf, type ConfineRequest } from './layout';

export interface Confined {
  argv: string[];
  env: Record<string, string>;
  confined: boolean;
  /** Written to the child's descriptors 3, 4, ... (the seccomp program bwrap reads). */
  inputs: Buffer[];
  close(): Promise<void>;
}

/** The argv and environment that run `request` confined (or as it is, with `mode: none`). */
export async function confine(
  request: ConfineRequest,
  onRefused: (err: Error) => void = () => undefined,
  onConnected: () => void = () => undefined,
): Promise<Confined> {
  const program = onPath(request.argv[0] ?? '', request.env.PATH);
  if (!program) {
    // As spawn would say it, so a missing agent CLI is still reported as not installed.
    throw new SpawnError(
      `Cannot run '${request.argv[0]}': command not found (ENOENT); is it installed and on PATH?`,
      'ENOENT',
    );
  }
  if (request.mode === 'none') {
    return {
      argv: request.argv,
      env: request.env,
      confined: false,
      inputs: [],
      close: async () => undefined,
    };
  }
  // Whatever a config says: saga's own services stay out of reach from inside.
  const reserved = reservedEndpoints(process.env);
  for (const endpoint of request.network ?? []) {
    const hit = reservedRoute(endpoint, reserved);
    if (hit) {
      throw new SandboxUnavailableError(
        `the allowed endpoint ${endpoint.host}:${endpoint.port} leads to ${hit.what} (${hit.host}:${hit.port}) ` +
          'and is refused: no process saga starts may reach it',
      );
    }
  }
  const tool = await detectSandbox();
  const routes = networkRoutes(request.network ?? []);
  if (routes.length > 0 && !tool.socat) {
    throw new SandboxUnavailableError(
      `socat is not installed, so the allowed endpoints (${routes.map((r) => `${r.endpoint.host}:${r.endpoint.port}`).join(', ')}) ` +
        'cannot be reached from the sandbox: `sudo apt-get install socat`',
    );
  }
  if (routes.some((r) => r.endpoint.port < 1024) && process.getuid?.() !== 0 && !tool.setpriv) {
    throw new SandboxUnavailableError(
      'setpriv (util-linux) is not installed, so a port below 1024 cannot be forwarded into the sandbox: ' +
        '`sudo apt-get install util-linux`',
    );
  }
  const layout = await layoutFor(request, program);
  // Names the process looks up are caught (port 53: root, or setpriv to bind it) where resolv.conf can be
  // shown over.
  const resolvDest = resolvConfPath();
  const dnsCatcher = resolvDest !== null && (process.getuid?.() === 0 || tool.setpriv !== null);
  const bridge =
    routes.length > 0
      ? await startNetworkBridge(routes, tool.socat!, onRefused, tool.setpriv, { dnsCatcher, onConnected })
      : null;
  layout.network = bridge
    ? {
        dir: bridge.dir,
        hosts: bridge.hosts,
        lowPorts: dnsCatcher || routes.some((r) => r.endpoint.port < 1024),
        resolv: bridge.resolv && resolvDest ? { source: bridge.resolv, dest: resolvDest } : null,
      }
    : null;
  const { hardening, seccomp } = hardeningFor(tool, layout);
  return {
    argv: [tool.path, ...bwrapArguments(layout, request.argv, existsSync('/run'), hardening)],
    // bwrap itself is visible inside (the namespace's pid 1): it gets only what the process gets.
    env: { ...request.env, TMPDIR: '/tmp' },
    confined: true,
    inputs: seccomp ? [seccomp] : [],
    close: async () => bridge?.close(),
  };
}

/**
 * The sandbox of a check, a set-up or a discovery command: its working directory, `network`, and the
 * package caches of its saga (`sagaDir`; without one, scratch caches that end with the run). One wider than
 * the narrowest is checked against the config files first (verifyCommandSandbox), with this worker's saga
 * home, not one the input names.
 */
export function commandSandbox(
  settings: CommandSandbox,
  sagaHome?: string,
  sagaDir?: string,
): SandboxRequest | Promise<SandboxRequest> {
  const request: SandboxRequest = {
    mode: settings.mode,
    sagaHome,
    ...(sagaDir ? { privateHome: privateHomeOf(sagaDir) } : {}),
    network: settings.network.map(parseEndpoint),
  };
  if (settings.mode === 'auto' && settings.network.length === 0) return request;
  return verifyCommandSandbox(settings, sagaHomeOf(process.env, os.homedir())).then(() => request);
}

/** What confines one run, besides the command, directory and environment of its process options. */
export type SandboxRequest = Omit<ConfineRequest, 'argv' | 'cwd' | 'env'>;

/** `runProcess` inside the sandbox `request` describes; the network bridge ends with the run. */
export async function runConfined(
  sandbox: SandboxRequest | Promise<SandboxRequest>,
  opts: RunProcessOptions,
  watch?: NetworkWatch,
): Promise<RunProcessResult> {
  const request = await sandbox;
  const env = Object.fromEntries(
    Object.entries(opts.env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  // A refused connection is said in the run's output, where whoever reads why the run failed looks.
  const said = (err: Error) => {
    watch?.refused(err);
    void appendFile(opts.outputPath, `\n[saga sandbox] connection refused: ${err.message}\n`).catch(
      () => undefined,
    );
  };
  const confineRequest = { ...request, argv: opts.argv, cwd: opts.cwd, env };
  const confined = await confine(confineRequest, said, () => watch?.connected());
  try {
    const result = await runProcess({
      ...opts,
      argv: confined.argv,
      env: confined.env,
      inputs: confined.inputs,
      ...(watch ? { stopper: watch.stopper } : {}),
    });
    // bwrap exits 128 + N when its command died of signal N: report the signal, as an unconfined run would.
    const signal = confined.confined && result.exitCode !== null ? signalOfExit(result.exitCode) : null;
    return signal ? { ...result, exitCode: null, signal } : result;
  } finally {
    watch?.close();
    await confined.close();
  }
}

/** Where the sandbox's resolv.conf goes: the host's, its link followed; null when there is none. */
function resolvConfPath(): string | null {
  try {
    return realpathSync('/etc/resolv.conf');
  } catch {
    return null;
  }
}

function signalOfExit(code: number): NodeJS.Signals | null {
  if (code <= 128) return null;
  const found = Object.entries(os.constants.signals).find(([, n]) => n === code - 128);
  return found ? (found[0] as NodeJS.Signals) : null;
}
