/**
 * Runs the implementation phase on Temporal's time-skipping test server with stand-in activities
 * (fleet-stand-ins.ts), under the stand-in saga of test/harness/workflows/fleet-parent.ts, for the
 * fleet-decision tests. A scenario gives the plan, the flags and the script; `drive` answers the questions
 * the fleet asks through the real `respond` update; the run returns the phase's result, the recorded
 * activity calls and what the saga saw (questions opened, answers, log lines).
 */
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { validatePlan, type Plan } from '../../src/domain/plan';
import { parseFlags } from '../../src/domain/request/flags';
import { respondUpdate } from '../../src/domain/saga/messages';
import type { LiveProgress } from '../../src/domain/saga/phase-progress';
import type { SagaContext } from '../../src/domain/saga/saga-input';
import type { Answer, Interaction, Usage } from '../../src/domain/contract/state';
import { createStandInSagaEnv, type StandInSagaEnv } from './stand-in-saga-env';
import { standInActivities, type Call, type FleetScript } from './fleet-stand-ins';
import { fleetParentViewQuery, fleetParentWorkflow, type FleetParentView } from './workflows/fleet-parent';

const QUEUE = 'fleet-decisions';

/** The implementation workflow's input and result, as the saga passes and takes them. */
interface ImplementationInput {
  ctx: SagaContext;
  plan: Plan;
  milestoneIds: number[];
  round: number;
  lanes: number;
}
interface ImplementationResult {
  outcome: 'integrated' | 'aborted';
  usage: Usage;
  progress?: LiveProgress;
}

export type FleetTestEnv = StandInSagaEnv;

export const createFleetTestEnv = (): Promise<FleetTestEnv> =>
  createStandInSagaEnv(require.resolve('./workflows/fleet-parent'), 'fleet-decisions');

/** A plan task: `owns` its files, `check` its one validation command. */
export interface TaskSketch {
  id: number;
  owns: string[];
  check?: string;
  dependsOn?: string[];
}

/** A valid plan of one milestone with these tasks and `npm test` as its validation. */
export function fleetPlan(tasks: TaskSketch[]): Plan {
  const raw = {
    name: 'fleet',
    problem: 'Fleet decisions.',
    scope: { in: [], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'tests pass', check: 'npm test' }],
    milestones: [
      {
        id: 1,
        slug: 'one',
        title: 'One',
        depends_on: [],
        goal: 'Everything.',
        validation: [{ text: 'the milestone tests pass', check: 'npm test' }],
        tasks: tasks.map((t) => ({
          id: t.id,
          slug: `t${t.id}`,
          title: `Task ${t.id}`,
          depends_on: t.dependsOn ?? [],
          scope: `Write ${t.owns.join(', ')}.`,
          owns: t.owns,
          interfaces: 'none',
          validation_method: 'command',
          validation: [{ text: `task ${t.id} check`, check: t.check ?? `node check-${t.id}.js` }],
          evidence: 'check output',
        })),
      },
    ],
  };
  const checked = validatePlan(raw, 'fleet plan');
  if (!checked.ok) throw new Error(checked.errors.join('; '));
  return checked.plan;
}

let sagas = 0;

/** The context a saga gives its phases; no file is touched (every activity is a stand-in). */
function fleetContext(fx: FleetTestEnv, scenario: FleetScenario): SagaContext {
  const name = `fleet${++sagas}-${Date.now() % 100_000}`;
  return {
    name,
    sagaWorkflowId: `saga-${name}`,
    repo: '/stand-in/repo',
    base: 'main',
    goal: 'Fleet decisions',
    sagaDir: `/stand-in/sagas/${name}`,
    worktreeRoot: '/stand-in',
    hostQueue: QUEUE,
    flags: parseFlags(`${scenario.args ?? ''} Fleet decisions`.trim(), {}),
    executionMode: 'inline',
    settings: {
      ...fx.settings,
      attempts: scenario.attempts ?? 1,
      budget: { ...fx.settings.budget, sagaUsd: scenario.budgetUsd ?? null },
    },
    agent: null,
  };
}

/** The running saga as a test drives it: wait for a question, answer it. */
export class FleetSaga {
  constructor(
    private readonly handle: WorkflowHandle,
    /** The activity calls so far (the stand-ins append as the workflows call them). */
    readonly calls: Call[],
  ) {}

  view(): Promise<FleetParentView> {
    return this.handle.query(fleetParentViewQuery);
  }

  /** Waits (real time, a few seconds at most) until the question `id` is pending; returns it. */
  async question(id: string): Promise<Interaction> {
    for (let waited = 0; waited < 20_000; waited += 25) {
      const found = (await this.view()).pending.find((i) => i.id === id);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const { pending } = await this.view();
    throw new Error(
      `question ${id} was not asked; pending: ${pending.map((i) => i.id).join(', ') || 'none'}`,
    );
  }

  /** Answers through the saga's `respond` update, as `saga respond` and the chat bridge do. */
  respond(interactionId: string, choice: string, text?: string): Promise<Answer> {
    return this.handle.executeUpdate(respondUpdate, {
      args: [{ interactionId, choice, user: 'tester', ...(text !== undefined ? { text } : {}) }],
    });
  }
}

export interface FleetScenario {
  plan: Plan;
  script: FleetScript;
  /** The saga's arguments (its flags), e.g. `--autonomous`. */
  args?: string;
  /** `attempts` per delegation (default 1: every failed attempt ends the delegation). */
  attempts?: number;
  /** `budget.saga_usd` (default: none). Every stand-in agent run costs $0.01. */
  budgetUsd?: number;
  drive?: (saga: FleetSaga) => Promise<void>;
}

export interface FleetOutcome {
  result: ImplementationResult;
  calls: Call[];
  view: FleetParentView;
  ctx: SagaContext;
}

export async function runFleet(fx: FleetTestEnv, scenario: FleetScenario): Promise<FleetOutcome> {
  const ctx = fleetContext(fx, scenario);
  const { activities, calls } = standInActivities(scenario.script);
  const worker = await Worker.create({
    connection: fx.env.nativeConnection,
    taskQueue: QUEUE,
    workflowBundle: fx.workflowBundle,
    activities,
  });
  const input: ImplementationInput = {
    ctx,
    plan: scenario.plan,
    milestoneIds: scenario.plan.milestones.map((m) => m.id),
    round: 1,
    lanes: 2,
  };
  return worker.runUntil(async () => {
    const handle = await fx.env.client.workflow.start(fleetParentWorkflow, {
      taskQueue: QUEUE,
      workflowId: ctx.sagaWorkflowId,
      args: [input],
    });
    await scenario.drive?.(new FleetSaga(handle, calls));
    const result = (await handle.result().catch((error: Error) => {
      // What the workflows had done when they failed or stalled (a stall times out as time skips ahead).
      const done = calls.map((c) => c.name).join(', ');
      throw new Error(`${error.message}; activities called: ${done || 'none'}`, { cause: error });
    })) as ImplementationResult;
    return { result, calls, view: await handle.query(fleetParentViewQuery), ctx };
  });
}

/** The phase's log lines, oldest first, without their timestamps. */
export const loggedLines = (outcome: Pick<FleetOutcome, 'result'>): string[] =>
  (outcome.result.progress?.log ?? []).map((line) => line.replace(/^\S+ /, '')).reverse();
