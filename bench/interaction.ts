/**
 * Interaction latency as users feel it: `saga respond` → the next pending interaction visible in
 * `saga status`, and `saga start` → the first question visible, with the demo planner.
 *
 * The respond saga's planner asks ROUNDS rounds of QUESTIONS_PER_ROUND questions; the saga asks them in
 * batches of QUESTION_BATCH, so answering the last question of a batch opens the next batch (workflows
 * only) and answering the last of a round runs the planner again (one demo agent process) first.
 * Answers go through `respond` and visibility is polled with `getStatus`, the client functions
 * `saga respond` and `saga status --json` call, so the figure is the orchestration's and not the CLI's
 * start-up; the first transition of each round goes through the real CLI instead (bin/saga respond, then
 * bin/saga status --json until it shows the next batch), which also gives the `saga respond` wall times.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { prepareSaga, startSaga } from '../src/client/commands/start';
import { getStatus, respond } from '../src/client/saga-client';
import { createSampleRepo, greetingPlan } from '../src/demo/sample-repo';
import { phaseWorkflowId, sagaWorkflowId } from '../src/domain/contract/naming';
import { QUESTION_BATCH, questionInteractionId } from '../src/domain/planning/planner';
import type { SagaStatus } from '../src/domain/contract/state';
import { PROJECT_ROOT } from '../src/project-root';
import { figure, quantile, type Figure } from './figures';

const run = promisify(execFile);
const SAGA_BIN = path.join(PROJECT_ROOT, 'bin', 'saga');

const ROUNDS = 6;
/** Six batches a round: five batch-to-batch transitions, the first of them through the real CLI. */
const QUESTIONS_PER_ROUND = 6 * QUESTION_BATCH;
/** `saga start` samples (each a fresh repo and saga, ended once its first planner question shows). */
const START_SAMPLES = Number(process.env.BENCH_START_SAMPLES ?? 10);
/** Between two status polls: short against the 300 ms target, long enough not to flood the worker. */
const POLL_MS = 10;
const TIMEOUT_MS = 60_000;
const ANSWER = 'yes';

const progress = (line: string) =>
  process.stderr.write(`[bench ${Math.round(process.uptime())} s] ${line}\n`);

/** Interaction ids pending now that are not in `seen`; none while the saga does not answer queries yet. */
async function freshPending(client: Client, name: string, seen: Set<string>): Promise<SagaStatus['pending']> {
  try {
    return (await getStatus(client, name)).pending.filter((p) => !seen.has(p.id));
  } catch {
    return []; // not started yet, or its first workflow task is still running
  }
}

/** A whole batch of questions is pending (they are opened one by one), or something else than a question. */
const wholeBatch = (pending: SagaStatus['pending']): boolean =>
  pending.length >= QUESTION_BATCH || pending.some((p) => p.kind !== 'question');

/**
 * Polls like `saga status --json` until interactions not in `seen` are pending, and then until the whole
 * batch is (answering it needs all of it): when the first showed, when all had, and which they are.
 */
async function untilFresh(
  client: Client,
  name: string,
  seen: Set<string>,
): Promise<{ at: number; wholeAt: number; pending: SagaStatus['pending'] }> {
  const deadline = performance.now() + TIMEOUT_MS;
  let at: number | undefined;
  while (performance.now() < deadline) {
    const pending = await freshPending(client, name, seen);
    if (pending.length > 0) at ??= performance.now();
    if (at !== undefined && wholeBatch(pending)) return { at, wholeAt: performance.now(), pending };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`Saga ${name}: no new interaction within ${TIMEOUT_MS / 1000} s (seen: ${[...seen]}).`);
}

/** One bin/saga run; its wall time in ms and its stdout. A failed run makes every figure wrong: it throws. */
async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const start = performance.now();
  const { stdout } = await run(process.execPath, [SAGA_BIN, ...args], { env, encoding: 'utf8' });
  return { ms: performance.now() - start, stdout };
}

/** The planner's script: ROUNDS rounds of QUESTIONS_PER_ROUND yes/no questions, then the greeting plan. */
function questionRounds(): Record<string, unknown> {
  const rounds = Array.from({ length: ROUNDS }, (_, r) =>
    Array.from({ length: QUESTIONS_PER_ROUND }, (_, q) => ({
      id: `r${r + 1}q${q + 1}`,
      text: `Round ${r + 1}, question ${q + 1}: keep it simple?`,
      options: [ANSWER, 'no'],
      recommended: 0,
      substantive: false,
    })),
  );
  return {
    planner: {
      problem: 'The sample library cannot greet anyone yet.',
      questions: rounds,
      plan: greetingPlan(),
    },
  };
}

async function startedSaga(client: Client, dir: string, name: string): Promise<void> {
  const repo = createSampleRepo(path.join(dir, 'repo'), { script: questionRounds() });
  await startSaga(client, await prepareSaga({ repo, argumentsText: `Greet people ${name}`, name }));
}

export interface InteractionLatency {
  figures: Figure[];
  /** A saga that is running (waiting for its plan approval): what `saga status` is mostly called on. */
  runningSaga: string;
  /** Ends `runningSaga`. */
  endRunningSaga(): Promise<void>;
  /** Wall times of `bin/saga respond` runs that answered a real pending question. */
  respondCliMs: number[];
}

interface Transitions {
  batch: number[];
  /** The same answers until the whole next batch was pending. */
  wholeBatch: number[];
  round: number[];
  plan: number[];
  cliRoundTrip: number[];
  respondCliMs: number[];
}

/** Answers every question of the respond saga, timing each answer that opens the next interaction. */
async function answerAllQuestions(
  client: Client,
  name: string,
  cliEnv: NodeJS.ProcessEnv,
): Promise<Transitions> {
  const t: Transitions = {
    batch: [],
    wholeBatch: [],
    round: [],
    plan: [],
    cliRoundTrip: [],
    respondCliMs: [],
  };
  const seen = new Set<string>();
  await untilFresh(client, name, seen);
  seen.add('confirm-name');
  await respond(client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'bench' });
  let pending = (await untilFresh(client, name, seen)).pending;
  for (;;) {
    if (pending.some((p) => p.kind === 'plan-approval')) return t;
    for (const p of pending) seen.add(p.id);
    // The batch's answers but the last are not timed: they do not change what the saga asks next.
    const questionNumber = (id: string) => Number(/q(\d+)$/.exec(id)?.[1]);
    const [last, ...others] = [...pending].sort((a, b) => questionNumber(b.id) - questionNumber(a.id));
    await Promise.all(
      others.map((p) => respond(client, name, { interactionId: p.id, choice: ANSWER, user: 'bench' })),
    );
    const lastQuestion = questionNumber(last!.id);
    const endOfRound = lastQuestion === QUESTIONS_PER_ROUND;
    const firstOfRound = lastQuestion === QUESTION_BATCH;
    const start = performance.now();
    if (firstOfRound) {
      // The real CLI path: what a user at a shell waits for.
      const answered = await cli(['respond', name, last!.id, ANSWER], cliEnv);
      t.respondCliMs.push(answered.ms);
      for (;;) {
        const shown = (
          JSON.parse((await cli(['status', name, '--json'], cliEnv)).stdout) as SagaStatus
        ).pending.filter((p) => !seen.has(p.id));
        if (shown.length > 0) break;
      }
      t.cliRoundTrip.push(performance.now() - start);
      pending = (await untilFresh(client, name, seen)).pending;
      continue;
    }
    await respond(client, name, { interactionId: last!.id, choice: ANSWER, user: 'bench' });
    const next = await untilFresh(client, name, seen);
    const ms = next.at - start;
    pending = next.pending;
    if (pending.some((p) => p.kind === 'plan-approval')) t.plan.push(ms);
    else if (endOfRound) t.round.push(ms);
    else {
      t.batch.push(ms);
      t.wholeBatch.push(next.wholeAt - start);
    }
  }
}

/** `saga start` (the real CLI) → confirm-name pending, then (confirmed at once) → the first planner question. */
async function startSamples(
  client: Client,
  root: string,
  cliEnv: NodeJS.ProcessEnv,
): Promise<{ confirm: number[]; question: number[] }> {
  const confirm: number[] = [];
  const question: number[] = [];
  for (let i = 1; i <= START_SAMPLES; i++) {
    const name = `bench-start-${i}`;
    const dir = path.join(root, name);
    mkdirSync(dir);
    const repo = createSampleRepo(path.join(dir, 'repo'), { script: questionRounds() });
    const seen = new Set<string>();
    const start = performance.now();
    const started = cli(['start', '--repo', repo, '--name', name, '--', `Greet people ${name}`], cliEnv);
    const failed = started.then(() => new Promise<never>(() => undefined));
    const confirmShown = await Promise.race([untilFresh(client, name, seen), failed]);
    await started;
    confirm.push(confirmShown.at - start);
    seen.add('confirm-name');
    await respond(client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'bench' });
    const asked = await untilFresh(client, name, seen);
    if (!asked.pending.some((p) => p.id === questionInteractionId(1, 'r1q1')))
      throw new Error(
        `Saga ${name}: expected the first planner question, got ${asked.pending.map((p) => p.id)}`,
      );
    question.push(asked.at - start);
    const { ms } = await started;
    progress(
      `${name}: bin/saga start ${Math.round(ms)} ms; confirm-name seen after ${Math.round(confirmShown.at - start)} ms, ` +
        `the first question after ${Math.round(asked.at - start)} ms`,
    );
    await dumpHistories(client, name);
    await client.workflow.getHandle(sagaWorkflowId(name)).terminate('bench: first question seen');
  }
  return { confirm, question };
}

/** BENCH_DUMP=<dir>: a saga's saga and planning histories, to see where a question's time goes. */
async function dumpHistories(client: Client, name: string): Promise<void> {
  const dir = process.env.BENCH_DUMP;
  if (!dir) return;
  mkdirSync(path.join(dir, name), { recursive: true });
  for (const id of [sagaWorkflowId(name), phaseWorkflowId(name, 'planning')])
    writeFileSync(
      path.join(dir, name, `${id}.json`),
      historyToJSON(await client.workflow.getHandle(id).fetchHistory()),
    );
}

const p95 = (values: number[]) => quantile(values, 0.95);
const median = (values: number[]) => quantile(values, 0.5);

/** Runs both scenarios on the worker the bench started; `cliEnv` points bin/saga at the same server. */
export async function interactionLatency(
  client: Client,
  root: string,
  cliEnv: NodeJS.ProcessEnv,
): Promise<InteractionLatency> {
  const name = 'bench-questions';
  progress(
    `${name}: ${ROUNDS} planner rounds of ${QUESTIONS_PER_ROUND} questions, answered one batch at a time`,
  );
  mkdirSync(path.join(root, name));
  await startedSaga(client, path.join(root, name), name);
  const t = await answerAllQuestions(client, name, cliEnv);

  progress(`saga start → first question: ${START_SAMPLES} sagas started with bin/saga start`);
  const starts = await startSamples(client, root, cliEnv);

  const respondFigure = 'respond_to_next_visible_ms';
  const startFigure = 'start_to_first_question_ms';
  const figures = [
    figure(
      respondFigure,
      'p95',
      p95(t.batch),
      'ms',
      300,
      `${t.batch.length} answers that open the next batch; respond() → getStatus() shows it`,
    ),
    figure(respondFigure, 'median', median(t.batch), 'ms', null, `the same ${t.batch.length} answers`),
    figure(
      respondFigure,
      'p95 whole batch',
      p95(t.wholeBatch),
      'ms',
      null,
      `the same answers, until all ${QUESTION_BATCH} questions of the next batch show`,
    ),
    figure(
      respondFigure,
      'p95 next round',
      p95(t.round),
      'ms',
      null,
      `${t.round.length} answers that end a round: a demo planner run comes first`,
    ),
    figure(
      respondFigure,
      'plan',
      t.plan[0] ?? NaN,
      'ms',
      null,
      'last answer → plan approval (planner writes the plan)',
    ),
    figure(
      respondFigure,
      'p95 CLI round trip',
      p95(t.cliRoundTrip),
      'ms',
      null,
      `${t.cliRoundTrip.length} x bin/saga respond, then bin/saga status --json until it shows the next batch`,
    ),
    figure(
      startFigure,
      'p95 confirm-name',
      p95(starts.confirm),
      'ms',
      2000,
      `${starts.confirm.length} x bin/saga start → getStatus() shows confirm-name`,
    ),
    figure(
      startFigure,
      'p95 planner question',
      p95(starts.question),
      'ms',
      2000,
      `the same sagas, confirm-name answered at once → first planner question`,
    ),
    figure(startFigure, 'median planner question', median(starts.question), 'ms', null, 'the same sagas'),
  ];
  return {
    figures,
    respondCliMs: t.respondCliMs,
    runningSaga: name,
    endRunningSaga: async () => {
      await dumpHistories(client, name);
      await client.workflow.getHandle(sagaWorkflowId(name)).terminate('bench: every question answered');
    },
  };
}
