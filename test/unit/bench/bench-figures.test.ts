/**
 * The bench's arithmetic and output format: JSON lines exactly as the benchmark output contract shows them, targets judged
 * against the value, and per-task overhead measured from the moment a task could start (dependencies
 * reported and a lane free) to its agent's start, and from the agent's exit to the report; when a task's
 * change became visible to a reader (the board's update latency).
 */
import { figure, figureLine, quantile, skippedFigure, table } from '../../../bench/figures';
import { taskChangesVisibleAt, taskOverheads, type ImplementationTimings } from '../../../bench/history';

describe('bench figures', () => {
  test('a JSON line has exactly the contract keys, in order; the scenario stays in the table', () => {
    const f = figure('overhead_per_task_ms', 'median', 87.04, 'ms', 150, '8 tasks on 4 lanes');
    expect(figureLine(f)).toBe(
      '{"figure":"overhead_per_task_ms","stat":"median","value":87,"unit":"ms","target":150,"better":"lower","ok":true}',
    );
    expect(table([f])).toContain('8 tasks on 4 lanes');
  });

  test('ok is judged against the target; no target is information only', () => {
    expect(figure('replay_ms', 'total', 2115.6, 'ms', 2000).ok).toBe(false);
    expect(figure('makespan_ratio_to_ideal', '4 lanes', 1.0994, 'ratio', 1.1)).toMatchObject({
      value: 1.099,
      ok: true,
    });
    expect(figure('makespan_ms', '1 lane', 17_000, 'ms', null).ok).toBeNull();
    expect(table([figure('replay_ms', 'total', 2115.6, 'ms', 2000)])).toMatch(/MISSED/);
  });

  test('a figure that could not be measured is printed as skipped, with why, its value null', () => {
    const f = skippedFigure('forge_pr_open_ms', 'median', 'ms', 5000, 'Gitea is not built');
    expect(figureLine(f)).toBe(
      '{"figure":"forge_pr_open_ms","stat":"median","value":null,"unit":"ms","target":5000,"better":"lower","ok":null}',
    );
    expect(table([f])).toMatch(/skipped: Gitea is not built +skipped +< 5000 ms +skipped/);
  });

  test('a figure better higher (a throughput) is ok above its target', () => {
    const rate = (value: number) => figure('tasks_per_min', 'run', value, 'tasks/min', 100, '', 'higher');
    expect(rate(120)).toMatchObject({ better: 'higher', ok: true });
    expect(rate(80).ok).toBe(false);
  });

  test('quantiles by nearest rank', () => {
    expect(quantile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(quantile([...Array(20).keys()], 0.95)).toBe(18);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('task overheads', () => {
  // Three tasks on one lane: 1.2 waits for the lane held by 1.1; 1.3 depends on 1.2.
  const timings: ImplementationTimings = {
    startedAt: 1_000,
    closedAt: 9_000,
    children: [
      { ref: '1.1', workflowId: 'saga-x-m1t1', initiatedAt: 1_010, completedAt: 3_000 },
      { ref: '1.2', workflowId: 'saga-x-m1t2', initiatedAt: 3_020, completedAt: 5_500 },
      { ref: '1.3', workflowId: 'saga-x-m1t3', initiatedAt: 5_510, completedAt: 8_000 },
    ],
  };
  const agents = [
    { task: '1.1', attempt: 1, start: 1_100, exit: 2_900 },
    { task: '1.2', attempt: 1, start: 3_150, exit: 4_000 },
    { task: '1.2', attempt: 2, start: 4_200, exit: 5_400 },
    { task: '1.3', attempt: 1, start: 5_700, exit: 7_950 },
  ];

  test('ready is the later of the dependencies reporting and a lane coming free', () => {
    const overheads = taskOverheads(timings, { '1.3': ['1.2'] }, 1, agents);
    expect(overheads).toEqual([
      { ref: '1.1', startMs: 100, reportMs: 100 }, // ready when the phase started
      { ref: '1.2', startMs: 150, reportMs: 100 }, // lane free at 3000; first run to last exit
      { ref: '1.3', startMs: 200, reportMs: 50 }, // dependency reported at 5500
    ]);
  });

  test('with enough lanes a task without dependencies is ready at the start', () => {
    const overheads = taskOverheads(timings, {}, 4, agents);
    expect(overheads.map((o) => o.startMs)).toEqual([100, 2_150, 4_700]);
  });

  test('a task with no agent record is an error, not a silent zero', () => {
    expect(() => taskOverheads(timings, {}, 1, agents.slice(1))).toThrow(/No agent record for task 1.1/);
  });
});

describe('when a task change became visible', () => {
  const at = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
  const completed = (id: number, ms: number) => ({
    eventId: id,
    eventTime: at(ms),
    workflowTaskCompletedEventAttributes: {},
  });
  const started = (id: number, ms: number, workflowId: string, byTask: number) => ({
    eventId: id,
    eventTime: at(ms),
    startChildWorkflowExecutionInitiatedEventAttributes: { workflowId, workflowTaskCompletedEventId: byTask },
  });
  const ended = (id: number, ms: number, workflowId: string) => ({
    eventId: id,
    eventTime: at(ms),
    childWorkflowExecutionCompletedEventAttributes: { workflowExecution: { workflowId } },
  });

  test('running when the workflow task that started the child completed; passed at the next one after it ended', () => {
    const visible = taskChangesVisibleAt([
      {
        events: [
          completed(4, 1_000),
          started(5, 1_001, 'saga-x-m1t1', 4),
          started(6, 1_001, 'saga-x-m1t2', 4),
          ended(9, 3_000, 'saga-x-m1t1'),
          ended(10, 3_010, 'saga-x-m1t2'),
          completed(13, 3_040),
        ],
      },
      // The next run (continued as new) starts and hears back from its own children.
      { events: [completed(4, 5_000), started(5, 5_002, 'saga-x-m2t1', 4), ended(8, 7_000, 'saga-x-m2t1')] },
    ] as never);
    expect(Object.fromEntries(visible.running)).toEqual({
      'saga-x-m1t1': 1_000,
      'saga-x-m1t2': 1_000,
      'saga-x-m2t1': 5_000,
    });
    // m2t1 ended but no workflow task has taken it in yet: not visible.
    expect(Object.fromEntries(visible.passed)).toEqual({ 'saga-x-m1t1': 3_040, 'saga-x-m1t2': 3_040 });
  });
});
