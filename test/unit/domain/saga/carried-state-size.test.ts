/**
 * Compact carried state (no payload grows with the saga): an integrated milestone's task states leave the carried state for their
 * record file, so what crosses continue-as-new, results and queries stays small at any saga size. The budget
 * is measured on the state of a 10,000-task saga (200 milestones × 50 tasks) with its last milestone
 * running: every finished task as a real run leaves it (commit, evidence, files, usage, agent, times).
 */
import { initialMilestones, schedView } from '../../../../src/domain/fleet/fleet';
import { validatePlan, type Plan } from '../../../../src/domain/plan';
import {
  compactMilestone,
  expandMilestone,
  readMilestoneRecord,
  recordedMilestoneIds,
  type MilestoneRecord,
} from '../../../../src/domain/saga/milestone-records';
import type { MilestoneState, TaskState } from '../../../../src/domain/contract/state';
import { cappedLine, cappedList, LIST_CAP, utf8Bytes } from '../../../../src/domain/text/caps';

const MILESTONES = 200;
const TASKS = 50;
const SAGA_TASKS = MILESTONES * TASKS;
/** Carried bytes per task of the saga, the running milestone's full states and the log included. */
const BYTES_PER_TASK_BUDGET = 24;
/** The SDK warns of a payload over 512 KB; the carried state stays well under it. */
const PAYLOAD_WARNING = 512 * 1024;

function bigPlan(): Plan {
  const task = (m: number, t: number) => ({
    id: t,
    slug: `write-part-${m}-${t}`,
    title: `Write part ${m}.${t} of the feature`,
    depends_on: t > 1 ? [`${m}.${t - 1}`] : [],
    scope: `Implement part ${m}.${t}: the module, its tests and its docs.`,
    owns: [`src/part-${m}-${t}/`],
    interfaces: 'none',
    validation_method: 'command',
    validation: [{ text: 'its tests pass', check: `npm test -- part-${m}-${t}` }],
    evidence: 'test output',
  });
  const result = validatePlan(
    {
      name: 'big',
      problem: 'A feature of 10,000 tasks.',
      scope: { in: ['src/'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'all tests pass', check: 'npm test' }],
      milestones: Array.from({ length: MILESTONES }, (_, i) => ({
        id: i + 1,
        slug: `m${i + 1}`,
        title: `Milestone ${i + 1}`,
        depends_on: i === 0 ? [] : [i],
        goal: 'Its parts work.',
        validation: [{ text: 'tests pass', check: 'npm test' }],
        tasks: Array.from({ length: TASKS }, (_, t) => task(i + 1, t + 1)),
      })),
    },
    'big.json',
  );
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result.plan;
}

const hex = (n: number, len: number) => n.toString(16).padStart(len, '0').slice(-len);

/** A task as a finished real run leaves it. */
function finished(t: TaskState, status: TaskState['status']): TaskState {
  const n = t.milestone * 1000 + t.task;
  return {
    ...t,
    status,
    commit: hex(n, 8).repeat(5),
    attempts: 2,
    delegations: 1,
    evidence: [`runs/${t.key}-a2-checks/check-1.log`, `runs/${t.key}-a2/report.json`],
    workflowId: `saga-big-task-${t.key}`,
    runId: `0190${hex(n, 8)}-aaaa-7bbb-8ccc-${hex(n, 12)}`,
    worktree: `/home/user/.saga/worktrees/big-${t.key}`,
    changedFiles: [`src/part-${t.id}/index.ts`, `src/part-${t.id}/index.test.ts`, `docs/part-${t.id}.md`],
    usage: { inputTokens: 123456, outputTokens: 4567, costUsd: 0.4321, cachedInputTokens: 100000 },
    agent: { profile: 'claude', sessionId: `5f0c${hex(n, 4)}-1111-2222-3333-${hex(n, 12)}`, resumedRuns: 1 },
    startedAt: '2026-12-04T06:00:00.000Z',
    endedAt: '2026-12-04T06:12:34.567Z',
  };
}

/** The fleet's state at milestone 200 of 200: 199 integrated, the last one half done. */
function stateAtLastMilestone(compact: boolean): {
  milestones: MilestoneState[];
  records: MilestoneRecord[];
} {
  const records: MilestoneRecord[] = [];
  const milestones = initialMilestones('big', bigPlan()).map((m): MilestoneState => {
    if (m.id === MILESTONES)
      return {
        ...m,
        status: 'running',
        tasks: m.tasks.map((t) => (t.task <= TASKS / 2 ? finished(t, 'passed') : t)),
      };
    // One skipped task per milestone: it did not land, so acceptance still lists it.
    const tasks = m.tasks.map((t) => finished(t, t.task === TASKS ? 'skipped' : 'integrated'));
    const integrated: MilestoneState = {
      ...m,
      status: 'integrated',
      integrationCommit: 'c'.repeat(40),
      tasks,
    };
    records.push({ milestone: m.id, tasks });
    return compact ? compactMilestone(integrated) : integrated;
  });
  return { milestones, records };
}

const log = Array.from({ length: 100 }, (_, i) =>
  cappedLine(
    `2026-12-04T06:00:${String(i % 60).padStart(2, '0')}.000Z Task ${i}.1 write-part: passed after 2 attempt(s), commit ${'a'.repeat(10)}`,
  ),
);
const usage = { inputTokens: 1e9, outputTokens: 1e7, costUsd: 4321.5 };

/** What the implementation continues as new with (ImplementationInput.carried), as it goes on the wire. */
const carriedBytes = (milestones: MilestoneState[]) => utf8Bytes(JSON.stringify({ milestones, usage, log }));

describe('the carried state of a 10,000-task saga', () => {
  const compacted = stateAtLastMilestone(true);

  test(`stays within ${BYTES_PER_TASK_BUDGET} bytes a task and under the 512 KB payload warning`, () => {
    const bytes = carriedBytes(compacted.milestones);
    const perTask = bytes / SAGA_TASKS;
    process.stdout.write(
      `carried state of ${SAGA_TASKS} tasks: ${bytes} bytes, ${perTask.toFixed(1)} bytes a task\n`,
    );
    expect(perTask).toBeLessThanOrEqual(BYTES_PER_TASK_BUDGET);
    expect(bytes).toBeLessThan(PAYLOAD_WARNING);
  });

  test('would be far over Temporal 2 MB payload limit with every task state carried (the budget can fail)', () => {
    expect(carriedBytes(stateAtLastMilestone(false).milestones)).toBeGreaterThan(2 * 1024 * 1024);
  });

  test('keeps what acceptance and the scheduler need: the tasks that did not land, and which milestones are done', () => {
    const first = compacted.milestones[0]!;
    expect(first.tasks.map((t) => [t.id, t.status])).toEqual([[`1.${TASKS}`, 'skipped']]);
    expect(first.record).toEqual({ file: 'runs/milestones/1.json', tasks: TASKS, integrated: TASKS - 1 });
    expect(recordedMilestoneIds(compacted.milestones).size).toBe(MILESTONES - 1);
  });

  test('gives back every task state from the record file', () => {
    const full = stateAtLastMilestone(false).milestones[5]!;
    const back = expandMilestone(compacted.milestones[5]!, compacted.records[5]!);
    expect(back).toEqual(full);
    expect(back).not.toHaveProperty('record');
  });

  test('a record file read back is the record; a file of another shape is refused', () => {
    const record = compacted.records[5]!;
    expect(readMilestoneRecord(JSON.parse(JSON.stringify(record)))).toEqual(record);
    expect(readMilestoneRecord(null)).toBeNull();
    expect(readMilestoneRecord({ milestone: 6 })).toBeNull();
    expect(readMilestoneRecord({ milestone: 6, tasks: [{ id: '6.1', status: 'finished' }] })).toBeNull();
    expect(readMilestoneRecord({ milestone: '6', tasks: [] })).toBeNull();
  });

  test('a dependency on a task of a recorded milestone counts as done', () => {
    const plan = bigPlan();
    const spec = {
      ...plan.milestones[1]!,
      tasks: [{ ...plan.milestones[1]!.tasks[0]!, depends_on: ['1.3'] }],
    };
    const states = new Map(compacted.milestones.flatMap((m) => m.tasks.map((t) => [t.id, t] as const)));
    states.set('2.1', initialMilestones('big', plan)[1]!.tasks[0]!);
    const external = (recorded: Set<number>) =>
      schedView(spec, states, recorded).find((t) => t.ref === '1.3');
    expect(external(recordedMilestoneIds(compacted.milestones))?.status).toBe('done');
    expect(external(new Set())?.status).toBe('blocked');
  });
});

describe('lists and lines kept in state are capped in count and bytes', () => {
  test('a list is cut at its count, then at its bytes', () => {
    const many = Array.from({ length: 1_000 }, (_, i) => `src/file-${i}.ts`);
    expect(cappedList(many)).toHaveLength(LIST_CAP.count);
    const long = Array.from({ length: 100 }, (_, i) => `${'deep/'.repeat(100)}file-${i}.ts`);
    const kept = cappedList(long);
    expect(utf8Bytes(kept.join(''))).toBeLessThanOrEqual(LIST_CAP.bytes);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(long.slice(0, kept.length));
  });

  test('a line over the cap says how much was left out', () => {
    const line = cappedLine('x'.repeat(5_000), 2_000);
    expect(line).toHaveLength(2_000);
    expect(line).toMatch(/… \(\d+ more characters\)$/);
    expect(cappedLine('short')).toBe('short');
  });

  test('bytes are counted as UTF-8', () => {
    expect(utf8Bytes('aé€😀')).toBe(1 + 2 + 3 + 4);
  });
});
