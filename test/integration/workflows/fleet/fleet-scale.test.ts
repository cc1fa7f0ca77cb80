/**
 * A 64-task saga (8 milestones of 8) with instant demo agents on a real server and real git: it completes, and every
 * workflow's history stays bounded (the implementation phase continues as new between milestones).
 */
import { respond } from '../../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  createFleetRepo,
  planTask,
  sagaRuns,
  sagaWorktrees,
  startApprovedSaga,
} from '../../../harness/fleet-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

const MILESTONES = 8;
const TASKS_PER_MILESTONE = 8;
const HISTORY_BOUND = 2_000;

function scalePlan() {
  const milestones = Array.from({ length: MILESTONES }, (_, i) => {
    const id = i + 1;
    return {
      id,
      slug: `batch-${id}`,
      title: `Batch ${id}`,
      depends_on: id > 1 ? [id - 1] : [],
      goal: `Files of batch ${id}.`,
      validation: [{ text: `batch ${id} files exist`, check: `test -f m${id}/t${TASKS_PER_MILESTONE}.txt` }],
      tasks: Array.from({ length: TASKS_PER_MILESTONE }, (_, j) =>
        // Every fifth task builds on the one before it, so dependencies are exercised at scale too.
        planTask(
          j + 1,
          `file-${j + 1}`,
          [`m${id}/t${j + 1}.txt`],
          `test -f m${id}/t${j + 1}.txt`,
          j % 5 === 4 ? [`${id}.${j}`] : [],
        ),
      ),
    };
  });
  return {
    name: 'scale',
    problem: 'Sixty-four small files, one per task.',
    scope: { in: ['m*/'], out: [], delegated: [] },
    exit_criteria: [{ id: 'E1', text: 'the last file exists', check: `test -f m${MILESTONES}/t1.txt` }],
    milestones,
  };
}

function scaleScript() {
  const tasks: Record<string, unknown> = {};
  for (let m = 1; m <= MILESTONES; m++)
    for (let t = 1; t <= TASKS_PER_MILESTONE; t++)
      tasks[`${m}.${t}`] = { attempts: [{ files: { [`m${m}/t${t}.txt`]: `${m}.${t}\n` } }] };
  return { tasks };
}

describe('fleet at scale', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('scale');
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test('64 tasks complete with bounded histories', async () => {
    const started = Date.now();
    const { repo, planFile } = createFleetRepo(env.tmp('scale'), {
      plan: scalePlan(),
      script: scaleScript(),
    });
    const input = await startApprovedSaga(env, {
      repo,
      planFile,
      name: 'scale',
      args: '--subagents --parallel=4 Sixty-four files',
    });
    const done = await waitForPending(env, input.name, 'acceptance-1', 170_000);
    const tasks = done.milestones.flatMap((m) => m.tasks);
    expect(tasks).toHaveLength(MILESTONES * TASKS_PER_MILESTONE);
    expect(tasks.every((t) => t.status === 'integrated')).toBe(true);
    expect(sagaWorktrees(repo, input.name)).toEqual([]);
    await respond(env.client, input.name, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' });
    expect((await env.client.workflow.getHandle(sagaWorkflowId(input.name)).result()).phase).toBe('complete');
    const elapsedMs = Date.now() - started;

    const runs = await sagaRuns(env, input.name);
    // saga, planning, 64 tasks, validation, and at least two implementation runs (acceptance runs in the saga).
    expect(runs.length).toBeGreaterThanOrEqual(MILESTONES * TASKS_PER_MILESTONE + 5);
    const implementationRuns = runs.filter((r) => r.workflowId === `saga-${input.name}-implementation`);
    const largest = runs.reduce((a, b) => (b.historyLength > a.historyLength ? b : a));
    const byType = new Map<string, number>();
    for (const r of runs) byType.set(r.type, Math.max(byType.get(r.type) ?? 0, r.historyLength));
    // The figures the closing note reports.
    console.log(
      `fleet-scale: ${tasks.length} tasks in ${Math.round(elapsedMs / 1000)} s; largest history ` +
        `${largest.historyLength} events (${largest.workflowId}); per type ${JSON.stringify(Object.fromEntries(byType))}; ` +
        `implementation runs ${implementationRuns.length}`,
    );
    expect(implementationRuns.length).toBeGreaterThanOrEqual(2); // continued as new between milestones
    for (const r of runs)
      expect({ id: r.workflowId, events: r.historyLength < HISTORY_BOUND }).toEqual({
        id: r.workflowId,
        events: true,
      });
    // A task workflow's history is small and does not grow with the saga.
    expect(byType.get('taskWorkflow')!).toBeLessThan(100);
  }, 200_000);
});
