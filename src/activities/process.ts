/**
 * Runs one external process (a coding agent, a validation check) the way long activities need it:
 * in its own process group so the whole tree can be killed, output streamed to a file (never held in
 * memory beyond a small tail), with total and idle timeouts, an AbortSignal and throttled progress.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, promises as fs, type WriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';

const TAIL_BYTES = 4096;
const LAST_LINE_MAX = 200;

export interface ProcessProgress {
  outputBytes: number;
  lastLine: string;
  elapsedMs: number;
}

export interface RunProcessOptions {
  /** argv[0] is the command; never a shell string. */
  argv: string[];
  cwd: string;
  /** Complete environment of the child (defaults to this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here. */
  outputPath: string;
  /** Total run time before the tree is killed. */
  timeoutMs?: number;
  /** No output for this long means hung: the tree is killed. */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
  /** Called about every `progressIntervalMs` (default 1000) while the process runs. */
  onProgress?: (progress: ProcessProgress) => void;
  progressIntervalMs?: number;
  /** Between SIGTERM and SIGKILL (default 3000). */
  killGraceMs?: number;
  /** Called once the process runs, with its pid (= its process group id), e.g. to record it in a file. */
  onSpawn?: (pid: number) => Promise<void>;
  /** A file to read as the child's stdin (e.g. the prompt); default: no stdin. */
  stdinPath?: string;
  /**
   * Sees each output line (up to 64 KB; longer ones are skipped); a returned text stops the process tree
   * at once and becomes `stoppedFor` — e.g. a CLI retrying a request that can never succeed.
   */
  stopOnLine?: (line: string) => string | null;
}

export interface RunProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  idle: boolean;
  aborted: boolean;
  durationMs: number;
  outputBytes: number;
  lastLine: string;
  /** The last ~4 KB of output, decoded as UTF-8. */
  tail: string;
  /** Set when `stopOnLine` stopped the process: its reason. */
  stoppedFor?: string;
}

type StopReason = 'timeout' | 'idle' | 'abort' | 'line';
const LINE_MAX = 64 * 1024;

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

/**
 * `<sagaDir>/runs/<label>`, with the label reduced to a safe single path segment so that run files
 * always stay inside the saga directory.
 */
export function runDirectory(sagaDir: string, label: string): string {
  if (!path.isAbsolute(sagaDir))
    throw new Error(`Saga directory must be an absolute path, got '${sagaDir}'.`);
  const safe =
    label
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 100) || 'run';
  return path.join(sagaDir, 'runs', safe);
}

/** Keeps only the end of a stream of chunks. */
class OutputTail {
  bytes = 0;
  private tail = Buffer.alloc(0);

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    // Copy so the tail never pins a large chunk in memory.
    this.tail =
      chunk.length >= TAIL_BYTES
        ? Buffer.from(chunk.subarray(chunk.length - TAIL_BYTES))
        : Buffer.from(Buffer.concat([this.tail, chunk]).subarray(-TAIL_BYTES));
  }

  text(): string {
    let start = 0;
    // Skip UTF-8 continuation bytes left over from a character cut in half.
    while (start < this.tail.length && start < 4 && (this.tail[start] & 0xc0) === 0x80) start++;
    return this.tail.subarray(start).toString('utf8');
  }

  lastLine(): string {
    const lines = this.text().split(/\r\n|\r|\n/);
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i].trim();
      if (line) return line.length > LAST_LINE_MAX ? `${line.slice(0, LAST_LINE_MAX - 1)}…` : line;
    }
    return '';
  }
}

export async function runProcess(opts: RunProcessOptions): Promise<RunProcessResult> {
  const [command, ...args] = opts.argv;
  if (!command) throw new Error('runProcess: argv is empty; expected at least the command.');
  await assertDirectory(opts.cwd, command);
  await fs.mkdir(path.dirname(opts.outputPath), { recursive: true });

  const started = Date.now();
  const output = new OutputTail();
  if (opts.signal?.aborted) return summarise(output, started, null, null, 'abort');

  const sink = createWriteStream(opts.outputPath, { flags: 'a' });
  // Listened to at once: the stream can open while the stdin file is being opened below, and an 'open'
  // nobody heard left the run waiting forever, before any timeout was armed (seen under load).
  const sinkOpen = waitOpen(sink);
  sinkOpen.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  let child: ChildProcess;
  let stdin: FileHandle | null = null;
  try {
    // A file descriptor as stdin: the child reads the file itself, however large, with no pipe to feed.
    if (opts.stdinPath) stdin = await fs.open(opts.stdinPath, 'r');
    await sinkOpen;
    child = spawn(command, args, {
      cwd: opts.cwd,
      // PWD as a shell would set it: some CLIs (opencode) take their directory from PWD, not from getcwd().
      env: { ...(opts.env ?? process.env), PWD: opts.cwd },
      detached: true, // own process group: kill(-pid) reaches grandchildren too
      stdio: [stdin ? stdin.fd : 'ignore', 'pipe', 'pipe'],
    });
    await waitSpawned(child, command);
  } catch (err) {
    await closeSink(sink);
    throw err;
  } finally {
    await stdin?.close(); // the child holds its own copy of the descriptor
  }
  // Every listener goes on before any await: a process that dies at once (killed, crashed) would otherwise
  // exit unseen, and Node discards the output of a child nobody was reading yet when it exits.
  const pgid = child.pid as number;
  const graceMs = opts.killGraceMs ?? 3000;
  let idleTimer: NodeJS.Timeout | undefined;
  let stoppedFor: string | undefined;
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    const lines = opts.stopOnLine ? new LineSplitter(opts.stopOnLine) : null;
    stream.on('data', (chunk: Buffer) => {
      output.add(chunk);
      idleTimer?.refresh();
      const reason = lines?.add(chunk);
      if (reason && !stoppedFor) {
        stoppedFor = reason;
        stop('line');
      }
    });
    stream.pipe(sink, { end: false }); // pipe() applies backpressure, so memory stays bounded
  }
  const closed = waitClosed(child, graceMs);
  let sinkError: Error | undefined;
  sink.on('error', (err) => (sinkError ??= err));
  // When the leader exits, what it left running in its group is ended too (it may hold the pipes open).
  child.once('exit', () => signalGroup(pgid, 'SIGTERM'));

  let stopReason: StopReason | null = null;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (reason: StopReason) => {
    if (stopReason) return;
    stopReason = reason;
    signalGroup(pgid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), graceMs);
  };

  const timers: NodeJS.Timeout[] = [];
  if (opts.timeoutMs !== undefined) timers.push(setTimeout(() => stop('timeout'), opts.timeoutMs));
  if (opts.idleTimeoutMs !== undefined) {
    idleTimer = setTimeout(() => stop('idle'), opts.idleTimeoutMs);
    timers.push(idleTimer);
  }
  if (opts.onProgress) {
    const onProgress = opts.onProgress;
    const tick = () => {
      try {
        onProgress({
          outputBytes: output.bytes,
          lastLine: output.lastLine(),
          elapsedMs: Date.now() - started,
        });
      } catch {
        // Progress is best effort; a failing reporter must not leave the process unsupervised.
      }
    };
    timers.push(setInterval(tick, opts.progressIntervalMs ?? 1000));
  }
  const onAbort = () => stop('abort');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) stop('abort'); // aborted while spawning
  // Only now, with the timeouts running: a slow disk or a busy thread pool must not leave the child
  // unsupervised while the record is written.
  await opts.onSpawn?.(pgid).catch(() => undefined); // best effort, like progress
  const { code, signal } = await closed;
  for (const timer of timers) clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);
  // Make sure nothing of the tree survives (SIGKILL for whatever ignored SIGTERM).
  await endGroup(pgid, graceMs);
  clearTimeout(killTimer);
  await closeSink(sink);
  if (sinkError) {
    throw new Error(
      `Could not write the output of '${command}' to '${opts.outputPath}': ${sinkError.message}`,
    );
  }
  const result = summarise(output, started, code, signal, stopReason);
  return stoppedFor ? { ...result, stoppedFor } : result;
}

/** Cuts a stream into lines for `stopOnLine`; a line longer than LINE_MAX is skipped, never buffered. */
class LineSplitter {
  private partial = '';
  private skipping = false;
  constructor(private readonly check: (line: string) => string | null) {}

  add(chunk: Buffer): string | null {
    const parts = chunk.toString('utf8').split('\n');
    let found: string | null = null;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      if (!this.skipping) this.partial += part;
      if (this.partial.length > LINE_MAX) {
        this.partial = '';
        this.skipping = true;
      }
      if (last) return;
      if (!this.skipping) found ??= this.check(this.partial);
      this.partial = '';
      this.skipping = false;
    });
    return found;
  }
}

function summarise(
  output: OutputTail,
  started: number,
  exitCode: number | null,
  signal: NodeJS.Signals | null,
  reason: StopReason | null,
): RunProcessResult {
  return {
    exitCode,
    signal,
    timedOut: reason === 'timeout',
    idle: reason === 'idle',
    aborted: reason === 'abort',
    durationMs: Date.now() - started,
    outputBytes: output.bytes,
    lastLine: output.lastLine(),
    tail: output.text(),
  };
}

async function assertDirectory(cwd: string, command: string): Promise<void> {
  const stat = await fs.stat(cwd).catch(() => null);
  if (!stat?.isDirectory()) {
    throw new SpawnError(
      `Cannot run '${command}': working directory '${cwd}' does not exist or is not a directory.`,
    );
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

function closeSink(sink: WriteStream): Promise<void> {
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

/**
 * Resolves on 'close' (all output read). A descendant that escaped the group could hold the pipes open
 * forever, so some time after the leader exits the pipes are closed from this side.
 */
function waitClosed(
  child: ChildProcess,
  graceMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    let detach: NodeJS.Timeout | undefined;
    child.once('exit', () => {
      detach = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, graceMs + 2000);
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(detach);
      resolve({ code, signal });
    });
  });
}

/** What identifies a process group leader across a crash: its pid and its start time (Linux /proc). */
export interface ProcessGroupRecord {
  pgid: number;
  startTime: string | null;
}

export async function processGroupRecord(pid: number): Promise<ProcessGroupRecord> {
  return { pgid: pid, startTime: await processStartTime(pid) };
}

/**
 * Ends a process group left behind by a worker that died mid-run (a detached group outlives its worker).
 * A live leader with another start time is a reused pid and is left alone; a group whose leader is gone
 * is still the old one, as Linux never hands out a pid that is in use as a process group id.
 */
export async function endLeftoverGroup(record: ProcessGroupRecord, graceMs = 3000): Promise<boolean> {
  const startTime = await processStartTime(record.pgid);
  if (startTime !== null && record.startTime !== null && startTime !== record.startTime) return false;
  if (!(await groupRunning(record.pgid))) return false;
  await endGroup(record.pgid, graceMs);
  return true;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); null when gone or no /proc. */
async function processStartTime(pid: number): Promise<string | null> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return null;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** SIGTERM what is left of the group, SIGKILL after the grace period; resolves once no member runs. */
async function endGroup(pgid: number, graceMs: number): Promise<void> {
  if (!(await groupRunning(pgid))) return;
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 1000);
}

async function waitGroupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!(await groupRunning(pgid))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !(await groupRunning(pgid));
}

/**
 * Whether any process of the group still runs. kill(-pgid, 0) also counts zombies (an init that never
 * reaps orphans keeps them forever), so on Linux /proc is consulted to ignore them.
 */
async function groupRunning(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = await fs.readdir('/proc');
  } catch {
    return true; // no /proc (macOS): trust kill(0)
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}
