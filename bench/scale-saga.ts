/**
 * The big saga of the scale benches (`npm run bench:server`, `npm run bench:board`): milestones in a chain,
 * each with independent timed-agent tasks, taken through its answers the way a user would.
 */
import type { Client } from '@temporalio/client';
import { performance } from 'node:perf_hooks';
import { respond, waitForStatus } from '../src/client/saga-client';
import { FLAG_VOCABULARY } from '../src/domain/request/flags';
import { sagaWorkflowId } from '../src/domain/contract/naming';
import type { SagaStatus } from '../src/domain/contract/state';
import { startBenchSaga } from './drive';
import { benchPlanTask, writeTimedAgentRepo, type BenchRepo } from './scenario';

/** A number from the environment (a BENCH_* knob), else `fallback`. */
export const numberEnv = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

/** Lanes from the environment: the most a saga runs (FLAG_VOCABULARY.maxLanes) unless fewer are asked. */
export const lanesEnv = (name: string): number =>
  Math.min(numberEnv(name, FLAG_VOCABULARY.maxLanes), FLAG_VOCABULARY.maxLanes);

/**
 * The big saga's size: 20 milestones × 50 tasks of 1-s agents unless told otherwise, on 4 lanes (runs before
 * 2026-12-04 asked for 8; `--parallel=N` is clamped to FLAG_VOCABULARY.maxLanes, so more would be labelled but not run).
 */
export const SCALE = {
  milestones: numberEnv('BENCH_MILESTONES', 20),
  tasks: numberEnv('BENCH_TASKS', 50),
  agentMs: numberEnv('BENCH_AGENT_MS', 1_000),
  lanes: lanesEnv('BENCH_LANES'),
};

/** A plan of `milestones` in a chain, each with `tasks` independent tasks that write their own file. */
export function chainPlan(name: string, milestones: number, tasks: number): Record<string, unknown> {
  return {
    name,
    problem: `Scale scenario ${name}: ${milestones * tasks} tasks.`,
    scope: { in: ['out/'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'the repo is there', check: 'test -f README.md' }],
    milestones: Array.from({ length: milestones }, (_, m) => ({
      id: m + 1,
      slug: `m${m + 1}`,
      title: `Milestone ${m + 1}`,
      depends_on: m === 0 ? [] : [m],
      goal: 'Every task wrote its file.',
      validation: [{ text: 'the task files are there', check: 'test -d out' }],
      tasks: Array.from({ length: tasks }, (_, t) => benchPlanTask(`${m + 1}.${t + 1}`, [])),
    })),
  };
}

/** The scale sample: `milestones` × `tasks` timed-agent tasks of `agentMs` each, in a chain of milestones. */
export function writeScaleRepo(
  dir: string,
  name: string,
  milestones: number,
  tasks: number,
  agentMs: number,
): BenchRepo {
  const durations: Record<string, number> = {};
  for (let m = 1; m <= milestones; m++) for (let t = 1; t <= tasks; t++) durations[`${m}.${t}`] = agentMs;
  return writeTimedAgentRepo(dir, name, durations, chainPlan(name, milestones, tasks));
}

export const pendingIs = (id: string) => (s: SagaStatus) => s.pending.some((p) => p.id === id);

export interface Answered {
  /** `respond` (the Workflow Update) sent → its result back: when `saga respond` prints the answer. */
  updateMs: number;
  /** `respond` sent → plan approval in the status; planning's activities (discovery, set-up) run between. */
  planApprovalMs: number;
}

/** Starts a saga and answers the name question, timing the answer; returns once the plan awaits approval. */
export async function startAndConfirm(
  client: Client,
  repo: BenchRepo,
  name: string,
  lanes: number,
): Promise<Answered> {
  await startBenchSaga(client, repo, name, lanes, `Scale ${name}`);
  await waitForStatus(client, name, pendingIs('confirm-name'), { timeoutMs: 120_000, pollMs: 200 });
  const asked = performance.now();
  await respond(client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'bench' });
  const updateMs = performance.now() - asked;
  await waitForStatus(client, name, pendingIs('plan-approval-1'), { timeoutMs: 120_000, pollMs: 20 });
  return { updateMs, planApprovalMs: performance.now() - asked };
}

export async function approve(client: Client, name: string): Promise<void> {
  await respond(client, name, { interactionId: 'plan-approval-1', choice: 'approve', user: 'bench' });
}

/** Waits for the acceptance question (every task integrated, or fails naming those that are not). */
export async function awaitAcceptance(client: Client, name: string, timeoutMs: number): Promise<SagaStatus> {
  const review = await waitForStatus(client, name, pendingIs('acceptance-1'), { timeoutMs, pollMs: 1_000 });
  const notIntegrated = review.milestones.flatMap((m) => m.tasks).filter((t) => t.status !== 'integrated');
  if (notIntegrated.length)
    throw new Error(`${name}: not integrated: ${notIntegrated.map((t) => `${t.id} ${t.status}`).join(', ')}`);
  return review;
}

export async function approveAndFinish(client: Client, name: string, timeoutMs: number): Promise<SagaStatus> {
  await approve(client, name);
  return awaitAcceptance(client, name, timeoutMs);
}

export async function accept(client: Client, name: string): Promise<void> {
  await respond(client, name, { interactionId: 'acceptance-1', choice: 'accept', user: 'bench' });
  await client.workflow.getHandle(sagaWorkflowId(name)).result();
}

/**
 * `env` with a host and workflow queue of its own (`<host>-<suffix>`, `<queue>-<suffix>`): a bench scenario's
 * worker then takes no other scenario's work, and no other worker takes its.
 */
export const withOwnQueues = (env: NodeJS.ProcessEnv, suffix: string): NodeJS.ProcessEnv => ({
  ...env,
  SAGA_HOST_ID: `${env.SAGA_HOST_ID}-${suffix}`,
  SAGA_TASK_QUEUE: `${env.SAGA_TASK_QUEUE}-${suffix}`,
});

/** Runs `start` with this process's SAGA_HOST_ID and SAGA_TASK_QUEUE set to `env`'s (prepareSaga reads them). */
export async function withSagaQueues<T>(env: NodeJS.ProcessEnv, start: () => Promise<T>): Promise<T> {
  const names = ['SAGA_HOST_ID', 'SAGA_TASK_QUEUE'] as const;
  const saved = names.map((name) => process.env[name]);
  for (const name of names) process.env[name] = env[name];
  try {
    return await start();
  } finally {
    // process.env turns undefined into the text 'undefined': a variable that was unset is deleted.
    names.forEach((name, i) =>
      saved[i] === undefined ? delete process.env[name] : (process.env[name] = saved[i]),
    );
  }
}
