/**
 * Status deltas: what the watcher computes (src/client/board/delta.ts) and what the page applies
 * (public/delta.js, the page's own plain-JS module, evaluated here as it is served) give back the new view.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { applyDelta, jsonDelta, type DeltaOp } from '../../../../src/client/board/delta';
import { BoardWatcher, type BoardEvent } from '../../../../src/client/board/watcher';

type Apply = (value: unknown, ops: DeltaOp[]) => unknown;
const PAGE_SOURCE = readFileSync(
  path.join(__dirname, '../../../../src/client/board/public/delta.js'),
  'utf8',
);
// The page module has no imports; its one export becomes the function's result.
const pageApply = new Function(`${PAGE_SOURCE.replace(/^export /m, '')}\nreturn applyDelta;`)() as Apply;

const task = (id: string, status: string) => ({ id, title: `Task ${id}`, status, attempts: 1 });
type Milestone = { id: number; title: string; status: string; tasks: ReturnType<typeof task>[] };
const view = (milestones: Milestone[], pending: unknown[] = [], extra: Record<string, unknown> = {}) => ({
  status: { name: 'd', phase: 'implementation', milestones, pending, log: ['a'], ...extra },
  links: { saga: null, list: null, tasks: {} },
  agents: {},
});
const ms = (id: number, tasks: ReturnType<typeof task>[]): Milestone => ({
  id,
  title: `M${id}`,
  status: 'running',
  tasks,
});
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function roundTrip(before: unknown, after: unknown): DeltaOp[] {
  const ops = clone(jsonDelta(before, after)); // as sent: through JSON
  const frozen = clone(before);
  expect(pageApply(frozen, ops)).toEqual(after);
  expect(applyDelta(clone(before), ops)).toEqual(after);
  expect(frozen).toEqual(before); // the old view is not changed in place
  return ops;
}

describe('board status deltas', () => {
  const before = view(
    [ms(1, [task('1.1', 'running'), task('1.2', 'pending')]), ms(2, [task('2.1', 'pending')])],
    [{ id: 'q1', kind: 'question' }],
  );

  it('a task that changes state is one small operation; the other milestones stay the same objects', () => {
    const after = clone(before);
    after.status.milestones[0]!.tasks[0]!.status = 'passed';
    const ops = roundTrip(before, after);
    expect(ops).toEqual([[['status', 'milestones', 0, 'tasks', 0, 'status'], 'passed']]);
    const applied = pageApply(before, ops) as typeof before;
    expect(applied.status.milestones[1]).toBe(before.status.milestones[1]);
    expect(applied.links).toBe(before.links);
    expect(applied.status.milestones[0]).not.toBe(before.status.milestones[0]);
  });

  it('pending interactions added and removed, agents appearing and leaving, keys deleted', () => {
    const added = clone(before);
    added.status.pending.push({ id: 'q2', kind: 'question' });
    (added.agents as Record<string, unknown>)['1.1'] = {
      lastLine: 'working',
      step: null,
      attempt: 1,
      usage: null,
    };
    roundTrip(before, added);
    const removed = clone(added);
    removed.status.pending = [];
    removed.agents = {};
    delete (removed.status as Record<string, unknown>).log;
    const ops = roundTrip(added, removed);
    expect(ops).toContainEqual([['status', 'log']]);
  });

  it('milestones added (a plan approved), a value turned null, and a whole new view', () => {
    const grown = clone(before);
    grown.status.milestones.push(ms(3, [task('3.1', 'pending')]));
    (grown.status as Record<string, unknown>).error = null;
    roundTrip(before, grown);
    roundTrip(before, view([]));
    expect(jsonDelta(before, clone(before))).toEqual([]);
  });
});

describe('board watcher deltas', () => {
  it('sends a subscriber the whole view first, then numbered deltas; a late subscriber the whole latest', async () => {
    let current = view([
      ms(
        1,
        Array.from({ length: 50 }, (_, i) => task(`1.${i + 1}`, 'pending')),
      ),
    ]);
    const watcher = new BoardWatcher({ list: async () => ({ sagas: [] }), saga: async () => current }, 10);
    const seen: BoardEvent[] = [];
    const stop = watcher.subscribe('d', (e) => seen.push(e));
    await new Promise((r) => setTimeout(r, 40));
    const next = clone(current);
    next.status.milestones[0]!.tasks[3]!.status = 'running';
    current = next;
    await new Promise((r) => setTimeout(r, 40));
    expect(seen.map((e) => [e.event, e.id])).toEqual([
      ['status', '1'],
      ['status-delta', '2'],
    ]);
    const delta = JSON.parse(seen[1]!.data) as { name: string; from: number; to: number; ops: DeltaOp[] };
    expect(delta).toMatchObject({ name: 'd', from: 1, to: 2 });
    expect(pageApply(JSON.parse(seen[0]!.data), delta.ops)).toEqual(current);
    expect(seen[1]!.data.length * 10).toBeLessThan(seen[0]!.data.length);
    const late: BoardEvent[] = [];
    const stopLate = watcher.subscribe('d', (e) => late.push(e));
    expect(late.map((e) => [e.event, e.id])).toEqual([['status', '2']]);
    expect(JSON.parse(late[0]!.data)).toEqual(current);
    stop();
    stopLate();
    watcher.close();
  });
});
