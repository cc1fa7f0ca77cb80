/**
 * The implementation phase's own view of its tasks (src/domain/saga/phase-progress.ts): kept by its workflow, merged
 * into the saga's status by readers, and folded into the saga's state by `saga continue` from history.
 */
import {
  applyLiveProgress,
  mergeLiveProgress,
  mergeLogs,
  SAGA_LOG_KEEP,
  type LiveProgress,
} from '../../../../src/domain/saga/phase-progress';
import { withReportedProgress, type SagaState } from '../../../../src/domain/saga/saga-state';
import type { MilestoneState, TaskState } from '../../../../src/domain/contract/state';
import { noUsage } from '../../../../src/domain/agents/usage';
import { initialTaskState } from '../../../../src/domain/fleet/fleet';
import type { PlanMilestone, PlanTask } from '../../../../src/domain/plan';

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;

/** Task `1.n` of milestone 1 as the fleet starts it, with `patch` applied. */
const task = (id: string, patch: Partial<TaskState> = {}): TaskState => {
  const n = Number(id.split('.')[1]);
  const spec = { id: n, slug: `task-${id}`, title: `Task ${id}`, depends_on: [] as string[] } as PlanTask;
  return { ...initialTaskState('x', { id: 1 } as PlanMilestone, spec), ...patch };
};
const milestone = (tasks: TaskState[]): MilestoneState => ({
  id: 1,
  slug: 'core',
  title: 'Core',
  status: 'pending',
  tasks,
  integrationCommit: null,
});

describe('applyLiveProgress', () => {
  test('task changes update the states, add log lines at their time and the task usage to the total', () => {
    let live: LiveProgress = {
      milestones: [milestone([task('1.1'), task('1.2')])],
      usage: noUsage(),
      log: [],
    };
    const before = live;
    live = applyLiveProgress(
      live,
      { type: 'task', task: task('1.1', { status: 'running', worktree: '/w' }) },
      at(1),
    );
    const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.25 };
    live = applyLiveProgress(
      live,
      { type: 'task', task: task('1.1', { status: 'passed', attempts: 1, commit: 'abcdef1234567', usage }) },
      at(2),
    );
    live = applyLiveProgress(live, { type: 'log', line: 'Milestone 1 integrated' }, at(3));
    expect(before.milestones[0]!.tasks[0]!.status).toBe('pending'); // not changed in place
    expect(live.milestones[0]!.tasks.map((t) => t.status)).toEqual(['passed', 'pending']);
    expect(live.usage.costUsd).toBe(0.25);
    expect(live.log).toEqual([
      `${at(3)} Milestone 1 integrated`,
      `${at(2)} Task 1.1 task-1.1: passed after 1 attempt(s), commit abcdef1234`,
      `${at(1)} Task 1.1 task-1.1: agent started (delegation 0) in /w`,
    ]);
  });

  test('keeps the newest SAGA_LOG_KEEP lines', () => {
    let live: LiveProgress = { milestones: [], usage: noUsage(), log: [] };
    for (let i = 0; i < SAGA_LOG_KEEP + 5; i++)
      live = applyLiveProgress(live, { type: 'log', line: `l${i}` }, at(1));
    expect(live.log).toHaveLength(SAGA_LOG_KEEP);
    expect(live.log[0]).toBe(`${at(1)} l${SAGA_LOG_KEEP + 4}`);
  });
});

test('mergeLogs: two newest-first logs interleave by time, the first one first on a tie, at most `keep`', () => {
  const saga = [`${at(5)} s5`, `${at(3)} s3`, `${at(1)} s1`];
  const phase = [`${at(4)} p4`, `${at(3)} p3`, `${at(2)} p2`];
  expect(mergeLogs(saga, phase)).toEqual([
    `${at(5)} s5`,
    `${at(4)} p4`,
    `${at(3)} s3`,
    `${at(3)} p3`,
    `${at(2)} p2`,
    `${at(1)} s1`,
  ]);
  expect(mergeLogs(saga, phase, 2)).toEqual([`${at(5)} s5`, `${at(4)} p4`]);
  expect(mergeLogs([], phase)).toEqual(phase);
});

test("mergeLiveProgress: the phase's task states and usage replace the saga's; the logs merge; the rest stays", () => {
  const status = {
    phase: 'implementation',
    milestones: [milestone([task('1.1')])],
    usage: noUsage(),
    log: [`${at(1)} Phase: implementation`],
  };
  const live: LiveProgress = {
    milestones: [milestone([task('1.1', { status: 'running' })])],
    usage: { inputTokens: 1, outputTokens: 2, costUsd: 0.5 },
    log: [`${at(2)} Task 1.1 started`],
  };
  expect(mergeLiveProgress(status, live)).toEqual({
    phase: 'implementation',
    milestones: live.milestones,
    usage: live.usage,
    log: [`${at(2)} Task 1.1 started`, `${at(1)} Phase: implementation`],
  });
});

test('withReportedProgress: a live view (a phase result, or its state when the run ended) replaces the task states', () => {
  const state = {
    milestones: [milestone([task('1.1'), task('1.2')])],
    usage: noUsage(),
    log: [`${at(1)} Phase: implementation`],
  } as unknown as SagaState;
  const live: LiveProgress = {
    milestones: [milestone([task('1.1', { status: 'passed' }), task('1.2', { status: 'running' })])],
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 1 },
    log: [`${at(3)} Task 1.1 passed`],
  };
  const next = withReportedProgress(state, [
    { at: at(2), event: { type: 'log', line: 'Discovery done' } },
    { live },
  ]);
  expect(next.milestones[0]!.tasks.map((t) => t.status)).toEqual(['passed', 'running']);
  expect(next.usage.costUsd).toBe(1);
  expect(next.log).toEqual([
    `${at(3)} Task 1.1 passed`,
    `${at(2)} Discovery done`,
    `${at(1)} Phase: implementation`,
  ]);
});
