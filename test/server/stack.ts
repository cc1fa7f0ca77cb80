/**
 * The production Temporal stack the server suite runs on (scripts/server-stack.sh: temporal-server on
 * PostgreSQL, the UI server), started once by the suite's global setup; where it is, and how to start,
 * restart and stop one from a test.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ARTIFACTS } from '../harness/server';

export const ROOT = path.resolve(__dirname, '..', '..');
export const STACK_SCRIPT = path.join(ROOT, 'scripts', 'server-stack.sh');
/** Where the global setup records the stack (read when called: the setup sets the run's folder late). */
export const stackFile = (): string => path.join(process.env.JEST_SAGA_ARTIFACTS ?? ARTIFACTS, 'stack.json');

export interface StackInfo {
  dir: string;
  /** What `server-stack.sh env` prints: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, SAGA_UI_URL, TLS paths. */
  env: Record<string, string>;
}

export const stackInfo = (): StackInfo => JSON.parse(readFileSync(stackFile(), 'utf8')) as StackInfo;

/** The environment the script runs in: none of the caller's own Temporal or saga settings. */
function scriptEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('SAGA_')),
  );
  return { ...env, ...extra };
}

export function runStackScript(
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
  timeoutMs = 30 * 60_000,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [STACK_SCRIPT, ...args],
      { cwd: ROOT, env: scriptEnv(extraEnv), timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`server-stack.sh ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

export const parseEnvLines = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split('\n')
      .map((line) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );

/** Starts (or completes the start of) the stack in `dir`; resolves with its client settings. */
export async function startStack(
  dir: string,
  options: { portBase?: number; tlsDir?: string } = {},
): Promise<Record<string, string>> {
  const { stdout } = await runStackScript(['start', dir], {
    ...(options.portBase ? { STACK_PORT_BASE: String(options.portBase) } : {}),
    ...(options.tlsDir ? { STACK_TLS_DIR: options.tlsDir } : {}),
  });
  return parseEnvLines(stdout);
}

export const stopStack = (dir: string) => runStackScript(['stop', dir], {}, 120_000);

/** The temporal-server process of the stack in `dir` (its pid file). */
export const serverPid = (dir: string): number =>
  Number(readFileSync(path.join(dir, 'temporal-server.pid'), 'utf8').trim());

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A base port with the 11 ports the stack takes (base .. base+10) all free. */
export async function freePortBase(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    // Under 32768: the server stores membership ports as PostgreSQL smallints.
    const base = 20_000 + Math.floor(Math.random() * 1_200) * 10;
    const free = await Promise.all(Array.from({ length: 11 }, (_, i) => portFree(base + i)));
    if (free.every(Boolean)) return base;
  }
  throw new Error('No 11 consecutive free ports found for the server stack.');
}

/** `saga start` of the one-task greeting saga on `repo` with `planFile`, as the server tests run it. */
export const startArgs = (repo: string, planFile: string, name: string): string[] => [
  'start',
  '--repo',
  repo,
  '--plan',
  planFile,
  '--name',
  name,
  '--',
  'Add greeting',
];
