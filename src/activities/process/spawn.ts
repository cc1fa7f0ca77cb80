/** Starting a child process: its working directory checked, its output file open, its stdin a file. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';

/** What starting a child needs; a run's options (`RunProcessOptions`) extend it. */
export interface SpawnOptions {
  cwd: string;
  /** Complete environment of the child (defaults to this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here. */
  outputPath: string;
  /** A file to read as the child's stdin (e.g. the prompt); default: no stdin. */
  stdinPath?: string;
  /** Written, each whole, to the child's descriptors 3, 4, ... (e.g. a seccomp program for bwrap). */
  inputs?: Buffer[];
}

/** The command could not be started at all (not found, not executable, no working directory). */
export class SpawnError extends Error {
  override name = 'SpawnError';
  constructor(
    message: string,
    /** `ENOENT`/`EACCES` when the program itself is missing or not executable; null for the directory. */
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export async function assertDirectory(cwd: string, command: string): Promise<void> {
  const stat = await fs.stat(cwd).catch(() => null);
  if (!stat?.isDirectory()) {
    throw new SpawnError(
      `Cannot run '${command}': working directory '${cwd}' does not exist or is not a directory.`,
    );
  }
}

/** Starts the child in its own process group, its output appended to `outputPath` (the sink). */
export async function spawnChild(
  opts: SpawnOptions,
  command: string,
  args: string[],
): Promise<{ child: ChildProcess; sink: WriteStream }> {
  const sink = createWriteStream(opts.outputPath, { flags: 'a' });
  // Listened to at once: the stream can open while the stdin file is being opened below, and an 'open'
  // nobody heard left the run waiting forever, before any timeout was armed (seen under load).
  const sinkOpen = waitOpen(sink);
  sinkOpen.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  let stdin: FileHandle | null = null;
  try {
    // A file descriptor as stdin: the child reads the file itself, however large, with no pipe to feed.
    if (opts.stdinPath) stdin = await fs.open(opts.stdinPath, 'r');
    await sinkOpen;
    const child = spawn(command, args, {
      cwd: opts.cwd,
      // PWD as a shell would set it: some CLIs (opencode) take their directory from PWD, not from getcwd().
      env: { ...(opts.env ?? process.env), PWD: opts.cwd },
      detached: true, // own process group: kill(-pid) reaches grandchildren too
      stdio: [stdin ? stdin.fd : 'ignore', 'pipe', 'pipe', ...(opts.inputs ?? []).map(() => 'pipe' as const)],
    });
    (opts.inputs ?? []).forEach((input, i) => {
      const stream = child.stdio[3 + i] as Writable;
      // A child that exits without reading it is reported by its exit, not by a broken pipe here.
      stream.on('error', () => undefined);
      stream.end(input);
    });
    await waitSpawned(child, command);
    return { child, sink };
  } catch (err) {
    await closeSink(sink);
    throw err;
  } finally {
    await stdin?.close(); // the child holds its own copy of the descriptor
  }
}

function waitOpen(sink: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    sink.once('open', () => resolve());
    sink.once('error', (err) =>
      reject(new Error(`Cannot write process output to '${sink.path}': ${err.message}`)),
    );
  });
}

export function closeSink(sink: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (sink.destroyed || sink.closed) return resolve();
    sink.end(() => resolve());
    sink.once('error', () => resolve());
  });
}

function waitSpawned(child: ChildProcess, command: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'ENOENT'
          ? 'command not found (ENOENT); is it installed and on PATH?'
          : err.code === 'EACCES'
            ? 'permission denied (EACCES); is it executable?'
            : err.message;
      reject(new SpawnError(`Cannot run '${command}': ${why}`, err.code ?? null));
    });
  });
}
