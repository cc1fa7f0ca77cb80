/**
 * The benchmark's agent: a real process that sleeps for its task's known duration, writes the one file its
 * task owns, and records its own start and exit wall-clock times so the bench can tell the agent's time
 * from the orchestration's. Plain Node, no saga imports (it must boot as fast as any small CLI).
 *
 * Environment: BENCH_DURATIONS (JSON file: task ref → milliseconds), BENCH_AGENT_LOG (JSON lines appended:
 * {task, attempt, start, exit}), plus the saga agent protocol's SAGA_TASK_ID, SAGA_ATTEMPT, SAGA_ROLE.
 * With BENCH_AGENT_STARTS (JSON lines appended at start: AgentStart) it also names a session the way Claude
 * Code's stream-json does (a `system`/`init` line first), and continues the one given as `--resume <id>`:
 * a profile named `claude` with `output: claude` gets the product's session resume (bench/worker-kill.ts).
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/** When this process started (Node sets the time origin at process start, before any module loads). */
const started = performance.timeOrigin;

export interface AgentRecord {
  task: string;
  attempt: number;
  start: number;
  exit: number;
}

/** An agent process as it started: which task, its pid (its process group's too), its session. */
export interface AgentStart {
  task: string;
  pid: number;
  start: number;
  session: string;
  /** The session it was told to continue (`--resume <id>`); null for a fresh one. */
  resumed: string | null;
}

/** Records this process's start and prints its session (BENCH_AGENT_STARTS only). */
function announceStart(task: string): string | undefined {
  const file = process.env.BENCH_AGENT_STARTS;
  if (!file) return undefined;
  const at = process.argv.indexOf('--resume');
  const resumed = at > 0 ? (process.argv[at + 1] ?? null) : null;
  const session = resumed ?? `bench-${task || 'agent'}-${process.pid}`;
  process.stdout.write(`${JSON.stringify({ type: 'system', subtype: 'init', session_id: session })}\n`);
  const record: AgentStart = { task, pid: process.pid, start: started, session, resumed };
  appendFileSync(file, `${JSON.stringify(record)}\n`);
  return session;
}

/** The file a bench task writes: one per task, so no two tasks ever touch the same path. */
export const benchTaskFile = (ref: string): string => `out/t${ref.replace('.', '-')}.txt`;

function main(): void {
  const role = process.env.SAGA_ROLE ?? 'implementer';
  const task = process.env.SAGA_TASK_ID ?? '';
  const durations = JSON.parse(readFileSync(process.env.BENCH_DURATIONS!, 'utf8')) as Record<string, number>;
  const sleepMs = role === 'implementer' ? (durations[task] ?? 0) : 0;
  const session = announceStart(task);
  const finish = () => {
    if (role === 'implementer' && task) {
      const file = path.join(process.cwd(), benchTaskFile(task));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `task ${task}\n`);
    }
    process.stdout.write(
      `${JSON.stringify({ type: 'result', usage: { input_tokens: 0, output_tokens: 0 }, total_cost_usd: 0, ...(session ? { subtype: 'success', is_error: false, session_id: session } : {}) })}\n`,
    );
    const record: AgentRecord = {
      task,
      attempt: Number(process.env.SAGA_ATTEMPT) || 1,
      start: started,
      exit: Date.now(),
    };
    if (process.env.BENCH_AGENT_LOG)
      appendFileSync(process.env.BENCH_AGENT_LOG, `${JSON.stringify(record)}\n`);
  };
  if (sleepMs > 0) setTimeout(finish, Math.max(0, sleepMs - (Date.now() - started)));
  else finish();
}

if (require.main === module) main();
