import type { Plan } from '../../../../src/domain/plan';
import type { MilestoneState, PullRequestStatus } from '../../../../src/domain/contract/state';
import {
  emptyWorkpad,
  endUpdate,
  mergeWorkpad,
  milestoneUpdate,
  planApprovedUpdate,
  reviewUpdate,
} from '../../../../src/domain/tracker/workpad-updates';

const task = (id: number, title: string) => ({
  id,
  slug: `t${id}`,
  title,
  depends_on: [],
  scope: 's',
  owns: [],
  interfaces: '',
  validation_method: 'v',
  validation: [{ text: 't', check: 'true' }],
  evidence: 'e',
});
const plan = {
  problem: 'p',
  scope: { in: [], out: [], delegated: [] },
  exit_criteria: [
    { id: 'E1', text: 'greets', check: 'true' },
    { id: 'E2', text: 'tested', check: 'true' },
  ],
  milestones: [
    {
      id: 1,
      slug: 'a',
      title: 'First',
      depends_on: [],
      goal: 'g',
      validation: [],
      tasks: [task(1, 'One'), task(2, 'Two')],
    },
    {
      id: 2,
      slug: 'b',
      title: 'Second',
      depends_on: [1],
      goal: 'g',
      validation: [],
      tasks: [task(1, 'Three')],
    },
  ],
} as unknown as Plan;

describe('workpad updates', () => {
  test('plan approved: implementation, every task pending', () => {
    const update = planApprovedUpdate(plan, 'Greet people');
    expect(update.phase).toBe('implementation');
    expect(update.problem).toBe('Greet people');
    expect(update.exitCriteria).toEqual([
      { id: 'E1', text: 'greets', result: null },
      { id: 'E2', text: 'tested', result: null },
    ]);
    expect(update.milestones!.flatMap((m) => m.tasks.map((t) => [t.key, t.status]))).toEqual([
      ['m1t1', 'pending'],
      ['m1t2', 'pending'],
      ['m2t1', 'pending'],
    ]);
  });

  test('after a milestone: an integrated milestone’s tasks (left for its record) are integrated; PRs and cost', () => {
    const states = [
      { id: 1, slug: 'a', title: 'First', status: 'integrated', tasks: [], integrationCommit: 'abc' },
      { id: 2, slug: 'b', title: 'Second', status: 'running', tasks: [{ task: 1, status: 'running' }] },
    ] as unknown as MilestoneState[];
    const pr = {
      number: 7,
      url: 'http://x/7',
      milestone: 1,
      draft: true,
      state: 'open',
    } as PullRequestStatus;
    const update = milestoneUpdate(plan, states, [pr], 2.5);
    expect(update.milestones!.map((m) => [m.status, m.tasks.map((t) => t.status)])).toEqual([
      ['integrated', ['integrated', 'integrated']],
      ['running', ['running']],
    ]);
    expect(update.pullRequests).toEqual([{ number: 7, url: 'http://x/7', milestone: 1, state: 'draft' }]);
    expect(update.costUsd).toBe(2.5);
    expect(update.phase).toBeUndefined();
  });

  test('review carries the results; the end is done or cancelled', () => {
    const review = reviewUpdate(plan, [{ id: 'E1', result: 'passed', evidence: null }], 3);
    expect(review.exitCriteria!.map((c) => c.result)).toEqual(['passed', null]);
    expect(endUpdate('complete', 4).phase).toBe('done');
    expect(endUpdate('cancelled', 4).phase).toBe('cancelled');
  });

  test('merging keeps what an update leaves out', () => {
    const merged = mergeWorkpad(
      mergeWorkpad(emptyWorkpad('demo'), { phase: 'implementation', problem: 'p' }),
      { costUsd: 1, problem: undefined },
    );
    expect(merged).toMatchObject({ sagaName: 'demo', phase: 'implementation', problem: 'p', costUsd: 1 });
  });
});
