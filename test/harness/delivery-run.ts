/**
 * Runs the real delivery watch (deliveryWorkflow, and the real taskWorkflow for its fix tasks) on Temporal's
 * time-skipping test server under the stand-in saga of test/harness/workflows/delivery-parent.ts, with the
 * stand-in forge (forge-stand-ins.ts) and the fleet's stand-in task activities (fleet-stand-ins.ts). A
 * scenario scripts what the forge answers and when the saga wakes or stops the watch; `drive` answers the
 * watch's questions through the real `respond` update. The run returns the watch's result, the recorded
 * forge and task activity calls and what the saga saw.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { Answer, Interaction, PullRequestStatus } from '../../src/domain/contract/state';
import type { DeliverySettings } from '../../src/domain/delivery/delivery-config';
import { parseFlags } from '../../src/domain/request/flags';
import { respondUpdate } from '../../src/domain/saga/messages';
import type { SagaContext } from '../../src/domain/saga/saga-input';
import type { DeliveryInput, DeliveryResult } from '../../src/workflows/delivery/delivery-watch';
import { standInActivities, type AttemptScript, type Call } from './fleet-stand-ins';
import { forgeStandIns, type ForgeCall, type ForgeScript } from './forge-stand-ins';
import { createStandInSagaEnv, type StandInSagaEnv } from './stand-in-saga-env';
import {
  deliveryChildId,
  deliveryParentViewQuery,
  deliveryParentWorkflow,
  type DeliveryParentView,
  type ScheduledSignal,
} from './workflows/delivery-parent';

const QUEUE = 'delivery-decisions';

export type DeliveryTestEnv = StandInSagaEnv;

export const createDeliveryTestEnv = (): Promise<DeliveryTestEnv> =>
  createStandInSagaEnv(require.resolve('./workflows/delivery-parent'), 'delivery-decisions');

/** A saga PR as the fleet opened it: a draft, CI not seen yet. */
export function sagaPr(number: number, milestone: number | null, base: string): PullRequestStatus {
  const head = milestone === null ? 'saga/demo/integration' : `saga/demo/deliver-m${milestone}`;
  return {
    milestone,
    number,
    url: `http://forge.invalid/alice/demo/pulls/${number}`,
    head,
    base,
    headSha: `m${milestone ?? 0}-head`,
    draft: true,
    state: 'open',
    ci: 'pending',
    failing: [],
    ciFixes: 0,
    reviewFixes: 0,
    listedComments: [],
  };
}

/** Two stacked PRs: #7 (milestone 1) on main, #8 (milestone 2) on #7's branch. */
export const stackedPrs = (): PullRequestStatus[] => [
  sagaPr(7, 1, 'main'),
  sagaPr(8, 2, 'saga/demo/deliver-m1'),
];

export interface DeliveryScenario {
  prs?: PullRequestStatus[];
  forge?: ForgeScript;
  /** Per fix task key (`m1fix1`), the outcome of each attempt of its checks (default: pass). */
  fixes?: Record<string, AttemptScript[]>;
  /** Fix task keys whose agent changes no file. */
  unchanged?: string[];
  ciFixAttempts?: number;
  /** The saga budget and what the saga had spent (default: no budget). */
  budget?: DeliveryInput['budget'];
  reviewBots?: DeliverySettings['reviewBots'];
  /** When the saga wakes or stops the watch (workflow time after its start). */
  schedule: ScheduledSignal[];
  bodies?: Record<string, string>;
  fixChecks?: DeliveryInput['fixChecks'];
  drive?: (saga: DeliverySaga) => Promise<void>;
  /** Runs while fix task `ref`'s agent works (before its attempt answers), with the watch's handle. */
  duringFix?: (ref: string, watch: WorkflowHandle) => Promise<void>;
}

export interface DeliveryOutcome {
  result: DeliveryResult;
  forgeCalls: ForgeCall[];
  taskCalls: Call[];
  view: DeliveryParentView;
  ctx: SagaContext;
}

/** The running saga as a test drives it: wait for a question, answer it. */
export class DeliverySaga {
  constructor(private readonly handle: WorkflowHandle) {}

  view(): Promise<DeliveryParentView> {
    return this.handle.query(deliveryParentViewQuery);
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

  respond(interactionId: string, choice: string): Promise<Answer> {
    return this.handle.executeUpdate(respondUpdate, { args: [{ interactionId, choice, user: 'tester' }] });
  }
}

let sagas = 0;

function deliveryContext(fx: DeliveryTestEnv, scenario: DeliveryScenario): SagaContext {
  const name = `deliver${++sagas}-${Date.now() % 100_000}`;
  const delivery: DeliverySettings = {
    pr: 'stacked',
    target: {
      kind: 'gitea',
      url: 'http://forge.invalid',
      owner: 'alice',
      repo: 'demo',
      tokenEnv: 'FORGE_TOKEN',
    },
    remote: 'origin',
    ciFixAttempts: scenario.ciFixAttempts ?? 2,
    autoMerge: false,
    reviewBots: scenario.reviewBots ?? 'list',
    mergeMethod: 'merge',
  };
  return {
    name,
    sagaWorkflowId: `saga-${name}`,
    repo: '/stand-in/repo',
    base: 'main',
    goal: 'Delivery decisions',
    sagaDir: `/stand-in/sagas/${name}`,
    worktreeRoot: '/stand-in',
    hostQueue: QUEUE,
    flags: parseFlags('Delivery decisions', {}),
    executionMode: 'inline',
    settings: { ...fx.settings, attempts: 1, delivery },
    agent: null,
  };
}

/** The task stand-ins, with fix tasks changing a file unless the scenario says their agent changed none. */
function taskStandIns(scenario: DeliveryScenario, watch: () => WorkflowHandle) {
  const { activities, calls } = standInActivities({ attempts: scenario.fixes ?? {} });
  const runTaskAttempt: typeof activities.runTaskAttempt = async (input) => {
    const ref = input.agent.taskId!;
    await scenario.duringFix?.(ref, watch());
    const result = await activities.runTaskAttempt(input);
    if (!result.handoff || scenario.unchanged?.includes(ref)) return result;
    const changedFiles = [`src/${ref}.ts`];
    return { ...result, handoff: { ...result.handoff, committed: true, changedFiles, changedFileCount: 1 } };
  };
  return { activities: { ...activities, runTaskAttempt }, calls };
}

export async function runDelivery(fx: DeliveryTestEnv, scenario: DeliveryScenario): Promise<DeliveryOutcome> {
  const ctx = deliveryContext(fx, scenario);
  const prs = scenario.prs ?? stackedPrs();
  const forge = forgeStandIns(prs, scenario.forge ?? {});
  const tasks = taskStandIns(scenario, () => fx.env.client.workflow.getHandle(watchId(ctx)));
  const worker = await Worker.create({
    connection: fx.env.nativeConnection,
    taskQueue: QUEUE,
    workflowBundle: fx.workflowBundle,
    activities: { ...tasks.activities, ...forge.activities },
  });
  const delivery: DeliveryInput & { bodies?: Record<string, string> } = {
    ctx,
    fixChecks: scenario.fixChecks ?? {},
    round: 1,
    prs,
    budget: scenario.budget ?? { limitUsd: null, spentUsd: 0 },
    ...(scenario.bodies ? { bodies: scenario.bodies } : {}),
  };
  return worker.runUntil(async () => {
    const handle = await fx.env.client.workflow.start(deliveryParentWorkflow, {
      taskQueue: QUEUE,
      workflowId: ctx.sagaWorkflowId,
      args: [{ delivery, schedule: scenario.schedule }],
    });
    await scenario.drive?.(new DeliverySaga(handle));
    const result = (await handle.result().catch((error: Error) => {
      const done = [...forge.calls, ...tasks.calls].map((c) => c.name).join(', ');
      throw new Error(`${error.message}; activities called: ${done || 'none'}`, { cause: error });
    })) as DeliveryResult;
    const view = await handle.query(deliveryParentViewQuery);
    return { result, forgeCalls: forge.calls, taskCalls: tasks.calls, view, ctx };
  });
}

/** The watch's own workflow id under the stand-in saga (for signals sent to it directly). */
export const watchId = (ctx: SagaContext): string => deliveryChildId(ctx.sagaWorkflowId);
