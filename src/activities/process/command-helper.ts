/**
 * Short commands (git) run through a small helper process. Spawning from the worker itself is slow: fork
 * copies the page tables of a ~250 MB process, about 13 ms a command here against 2 ms from a small one,
 * and it blocks the worker's event loop meanwhile. A task runs a dozen git commands, so this is most of
 * the orchestration's own cost per task.
 *
 * The helper is plain Node with no dependencies, started on first use, given argument arrays (never a
 * shell string), and gone when the worker goes (it exits when its IPC channel closes). If it cannot run or
 * dies, commands run directly as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface CommandOutput {
  /** Exit code; null when the command could not start, was killed by a signal or timed out. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why the command did not run to an exit code (e.g. ENOENT, or the timeout). */
  failure?: string;
  /** The command ran past `timeoutMs`: its whole process group was killed. */
  timedOut?: boolean;
}

export interface CommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  maxBuffer: number;
  /** Kill the command and everything it started (its process group) after this long; none when absent. */
  timeoutMs?: number;
}

interface Request extends CommandOptions {
  id: number;
  file: string;
  args: string[];
}

/**
 * Runs one request: the program in its own process group (so a timeout kills what it started too: hooks,
 * fsmonitor daemons, credential helpers), stdin closed, output capped at maxBuffer. Plain JavaScript in a
 * string, because the helper process runs it with no build step; the worker uses the same source when it
 * runs commands directly.
 */
const RUN_SOURCE = `
function runRequest(m, reply) {
  const { spawn } = require('node:child_process');
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    reply({ code: null, stdout: '', stderr: '', failure: String(error && error.message) });
    return;
  }
  const out = [];
  const err = [];
  let size = 0;
  let failure;
  let timedOut = false;
  let settled = false;
  let fallback;
  const killGroup = () => {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { try { child.kill('SIGKILL'); } catch {} }
    // A process that left the group may still hold the pipes: answer anyway shortly after the kill.
    if (!fallback) fallback = setTimeout(() => finish(null, 'SIGKILL'), 2000);
  };
  const timer = m.timeoutMs > 0 ? setTimeout(() => {
    timedOut = true;
    failure = 'timed out after ' + m.timeoutMs + ' ms; its process group was killed';
    killGroup();
  }, m.timeoutMs) : null;
  const collect = (into) => (chunk) => {
    size += chunk.length;
    if (size > m.maxBuffer) {
      if (!failure) failure = 'output exceeded ' + m.maxBuffer + ' bytes; killed';
      killGroup();
    } else into.push(chunk);
  };
  child.stdout.on('data', collect(out));
  child.stderr.on('data', collect(err));
  function finish(code, signal) {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    if (fallback) clearTimeout(fallback);
    const killed = failure !== undefined || code === null;
    reply({
      code: killed ? null : code,
      stdout: Buffer.concat(out).toString('utf8'),
      stderr: Buffer.concat(err).toString('utf8'),
      ...(killed ? { failure: failure || 'killed by ' + signal } : {}),
      ...(timedOut ? { timedOut: true } : {}),
    });
  }
  child.on('error', (error) => {
    if (!failure) failure = String(error && error.message);
    finish(null, null);
  });
  child.on('close', finish);
}
`;

/** The helper's whole program: one runRequest per message, the result sent back with the same id. */
const HELPER_PROGRAM = `${RUN_SOURCE}
process.on('message', (m) => runRequest(m, (result) => process.send({ id: m.id, ...result })));
process.on('disconnect', () => process.exit(0));
`;

type RunRequest = (request: Omit<Request, 'id'>, reply: (output: CommandOutput) => void) => void;
// The same source as the helper's, so a direct run behaves exactly like a helper run.
const runRequest = new Function('require', `${RUN_SOURCE}\nreturn runRequest;`)(require) as RunRequest;

function runDirectly(file: string, args: string[], options: CommandOptions): Promise<CommandOutput> {
  return new Promise((resolve) => runRequest({ file, args, ...options }, resolve));
}

class CommandHelper {
  private child: ChildProcess | null = null;
  /** A helper that died before answering anything will not work here: run directly from then on. */
  private broken = false;
  private answered = 0;
  private nextId = 0;
  private readonly pending = new Map<number, { request: Request; resolve: (o: CommandOutput) => void }>();

  run(file: string, args: string[], options: CommandOptions): Promise<CommandOutput> {
    const child = this.helper();
    if (!child) return runDirectly(file, args, options);
    const request: Request = { id: this.nextId++, file, args, ...options };
    return new Promise((resolve) => {
      this.pending.set(request.id, { request, resolve });
      if (this.pending.size === 1) this.hold(true);
      child.send(request, (error) => {
        if (error) this.settleDirectly(request.id);
      });
    });
  }

  /** The helper's pid (tests end it to check what a crash does); null when none runs. */
  pid(): number | null {
    return this.child?.pid ?? null;
  }

  private helper(): ChildProcess | null {
    if (this.child?.connected) return this.child;
    if (this.broken) return null;
    try {
      const child = spawn(process.execPath, ['-e', HELPER_PROGRAM], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: {}, // every request carries its own environment
      });
      child.on('message', (output: CommandOutput & { id: number }) => {
        const waiting = this.pending.get(output.id);
        if (!waiting) return;
        this.answered++;
        this.pending.delete(output.id);
        if (this.pending.size === 0) this.hold(false);
        const { id: _id, ...result } = output;
        waiting.resolve(result);
      });
      child.on('error', () => this.lost(child));
      child.on('exit', () => this.lost(child));
      this.child = child;
      this.hold(false);
      return child;
    } catch {
      return null;
    }
  }

  /** The helper keeps the worker alive only while it has work (a CLI using git activities can exit). */
  private hold(busy: boolean): void {
    const child = this.child;
    if (!child) return;
    if (busy) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  }

  /**
   * The helper died. What it had not answered may or may not have run, so it is not run again here: it
   * fails, and the activity's retry (activities are idempotent) decides afresh.
   */
  private lost(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = null;
    if (this.answered === 0) {
      // It never answered (it could not start, most likely): what it was given runs here instead.
      this.broken = true;
      for (const id of [...this.pending.keys()]) this.settleDirectly(id);
      return;
    }
    for (const [id, waiting] of [...this.pending]) {
      this.pending.delete(id);
      waiting.resolve({ code: null, stdout: '', stderr: '', failure: 'the command helper process exited' });
    }
  }

  private settleDirectly(id: number): void {
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    const { id: _id, file, args, ...options } = waiting.request;
    void runDirectly(file, args, options).then(waiting.resolve);
  }
}

const helper = new CommandHelper();

/** Runs a short command with an argument array; resolves with its output whatever the exit code. */
export const runCommand = (file: string, args: string[], options: CommandOptions): Promise<CommandOutput> =>
  helper.run(file, args, options);

export const commandHelperPid = (): number | null => helper.pid();
