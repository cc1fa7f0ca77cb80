/**
 * Runs one external process (a coding agent, a validation check) the way long activities need it:
 * in its own process group so the whole tree can be killed, output streamed to a file (never held in
 * memory beyond a small tail), with total and idle timeouts, an AbortSignal and throttled progress.
 */
import type { ChildProcess } from 'node:child_process';
import { promises as fs, type WriteStream } from 'node:fs';
import path from 'node:path';
import { endGroup, signalGroup } from './group';
import { LineSplitter, OutputTail } from './output';
import { assertDirectory, closeSink, spawnChild, type SpawnOptions } from './spawn';

export { endLeftoverGroup, processGroupRecord, type ProcessGroupRecord } from './group';
export { SpawnError } from './spawn';

export interface ProcessProgress {
  outputBytes: number;
  lastLine: string;
  elapsedMs: number;
}

/** What a run adds to what starting the child needs (`SpawnOptions`: cwd, env, its output and input files). */
export interface RunProcessOptions extends SpawnOptions {
  /** argv[0] is the command; never a shell string. */
  argv: string[];
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
  /**
   * Sees each output line (up to 64 KB; longer ones are skipped); a returned text stops the process tree
   * at once and becomes `stoppedFor` — e.g. a CLI retrying a request that can never succeed.
   */
  stopOnLine?: (line: string) => string | null;
  /**
   * Given, once the process runs, a function that stops its tree at once for a reason seen outside its
   * output (the sandbox refusing what it tries to reach); the reason becomes `stoppedBy`.
   */
  stopper?: (stop: (reason: string) => void) => void;
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
  /** The last ~4 KB of stderr alone (where a crash says why). */
  stderrTail: string;
  /** Set when `stopOnLine` stopped the process: its reason. */
  stoppedFor?: string;
  /** Set when `stopper` stopped the process: its reason. */
  stoppedBy?: string;
}

type StopReason = 'timeout' | 'idle' | 'abort' | 'line' | 'stopper';

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

export async function runProcess(opts: RunProcessOptions): Promise<RunProcessResult> {
  const [command, ...args] = opts.argv;
  if (!command) throw new Error('runProcess: argv is empty; expected at least the command.');
  await assertDirectory(opts.cwd, command);
  await fs.mkdir(path.dirname(opts.outputPath), { recursive: true });

  const started = Date.now();
  const output = new OutputTail();
  if (opts.signal?.aborted) return summarise(output, started, null, null, 'abort');
  const { child, sink } = await spawnChild(opts, command, args);
  // Every listener goes on before any await: a process that dies at once (killed, crashed) would otherwise
  // exit unseen, and Node discards the output of a child nobody was reading yet when it exits.
  const run = new SupervisedProcess(child, sink, output, opts, started);
  // Only now, with the timeouts running: a slow disk or a busy thread pool must not leave the child
  // unsupervised while the record is written.
  await opts.onSpawn?.(run.pgid).catch(() => undefined); // best effort, like progress
  const { code, signal } = await run.finished();
  if (run.sinkError) {
    throw new Error(
      `Could not write the output of '${command}' to '${opts.outputPath}': ${run.sinkError.message}`,
    );
  }
  const result = summarise(output, started, code, signal, run.stopReason);
  return {
    ...result,
    stderrTail: run.stderr.text(),
    ...(run.stoppedFor ? { stoppedFor: run.stoppedFor } : {}),
    ...(run.stoppedBy ? { stoppedBy: run.stoppedBy } : {}),
  };
}

/**
 * A running child under supervision: its output read into the tail, the sink and `stopOnLine`; total and
 * idle timeouts, the abort signal and progress ticks; its whole group stopped (SIGTERM, then SIGKILL after
 * the grace period) for any of them. The constructor attaches everything without awaiting.
 */
class SupervisedProcess {
  readonly pgid: number;
  stopReason: StopReason | null = null;
  stoppedFor: string | undefined;
  stoppedBy: string | undefined;
  sinkError: Error | undefined;
  readonly stderr = new OutputTail();
  private readonly graceMs: number;
  private readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly timers: NodeJS.Timeout[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.stop('abort');

  constructor(
    child: ChildProcess,
    private readonly sink: WriteStream,
    private readonly output: OutputTail,
    private readonly opts: RunProcessOptions,
    started: number,
  ) {
    this.pgid = child.pid as number;
    this.graceMs = opts.killGraceMs ?? 3000;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) this.read(stream);
    }
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.add(chunk));
    this.closed = waitClosed(child, this.graceMs);
    sink.on('error', (err) => (this.sinkError ??= err));
    // When the leader exits, what it left running in its group is ended too (it may hold the pipes open).
    child.once('exit', () => signalGroup(this.pgid, 'SIGTERM'));
    this.armTimers(started);
    opts.stopper?.((reason) => {
      if (this.stopReason) return;
      this.stoppedBy = reason;
      this.stop('stopper');
    });
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (opts.signal?.aborted) this.stop('abort'); // aborted while spawning
  }

  private read(stream: NodeJS.ReadableStream): void {
    const lines = this.opts.stopOnLine ? new LineSplitter(this.opts.stopOnLine) : null;
    stream.on('data', (chunk: Buffer) => {
      this.output.add(chunk);
      this.idleTimer?.refresh();
      const reason = lines?.add(chunk);
      if (reason && !this.stoppedFor) {
        this.stoppedFor = reason;
        this.stop('line');
      }
    });
    stream.pipe(this.sink, { end: false }); // pipe() applies backpressure, so memory stays bounded
  }

  private armTimers(started: number): void {
    const { timeoutMs, idleTimeoutMs, onProgress } = this.opts;
    if (timeoutMs !== undefined) this.timers.push(setTimeout(() => this.stop('timeout'), timeoutMs));
    if (idleTimeoutMs !== undefined) {
      this.idleTimer = setTimeout(() => this.stop('idle'), idleTimeoutMs);
      this.timers.push(this.idleTimer);
    }
    if (onProgress) {
      const tick = () => {
        try {
          onProgress({
            outputBytes: this.output.bytes,
            lastLine: this.output.lastLine(),
            elapsedMs: Date.now() - started,
          });
        } catch {
          // Progress is best effort; a failing reporter must not leave the process unsupervised.
        }
      };
      this.timers.push(setInterval(tick, this.opts.progressIntervalMs ?? 1000));
    }
  }

  private stop(reason: StopReason): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    signalGroup(this.pgid, 'SIGTERM');
    this.killTimer = setTimeout(() => signalGroup(this.pgid, 'SIGKILL'), this.graceMs);
  }

  /** Waits for the child's end and its output, then makes sure nothing of its group survives. */
  async finished(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const exit = await this.closed;
    for (const timer of this.timers) clearTimeout(timer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    // SIGKILL for whatever ignored SIGTERM.
    await endGroup(this.pgid, this.graceMs);
    clearTimeout(this.killTimer);
    await closeSink(this.sink);
    return exit;
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
    stderrTail: '',
  };
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
