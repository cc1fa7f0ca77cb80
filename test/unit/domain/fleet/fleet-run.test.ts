import { initialMilestones, NO_CHANGES_REASON, type TaskReport } from '../../../../src/domain/fleet/fleet';
import {
  addedMilestones,
  integrationEscalation,
  judgedReport,
  resumedMilestones,
  retainedAfterEscalation,
  specChangeOf,
} from '../../../../src/domain/fleet/fleet-run';
import {
  conflictRedelegations,
  validationRedelegations,
} from '../../../../src/domain/fleet/milestone-failure';
import type { Plan } from '../../../../src/domain/plan';

const plan = {
  milestones: [1, 2].map((id) => ({
    id,
    slug: `m${id}`,
    title: `M${id}`,
    depends_on: id === 1 ? [] : [1],
    goal: 'g',
    validation: [],
    tasks: [
      {
        id: 1,
        slug: 'one',
        title: 'One',
        depends_on: [],
        scope: 's',
        owns: [],
        interfaces: '',
        validation_method: 'v',
        validation: [],
        evidence: 'e',
      },
    ],
  })),
} as unknown as Plan;

const report = (over: Partial<TaskReport> = {}): TaskReport => ({
  ref: '1.1',
  status: 'passed',
  reason: null,
  branch: 'b',
  commit: 'c',
  changedFiles: [],
  evidence: [],
  attempts: 1,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } as never,
  workflowId: 'w',
  runId: 'r',
  ...over,
});

describe('fleet run', () => {
  test('carried milestones: what was in flight is done again; the plan adds the rest', () => {
    const [m1] = initialMilestones('demo', plan);
    const carried = [
      {
        ...m1!,
        status: 'integrating' as const,
        tasks: m1!.tasks.map((t) => ({ ...t, status: 'running' as const })),
      },
    ];
    const known = resumedMilestones(carried);
    expect(known[0]!.status).toBe('running');
    expect(known[0]!.tasks[0]!.status).toBe('pending');
    expect(carried[0]!.tasks[0]!.status).toBe('running');
    expect(addedMilestones('demo', plan, known).map((m) => m.id)).toEqual([2]);
  });

  test('a passing report of a task that must change files and changed none is blocked', () => {
    expect(judgedReport(null, { requires_changes: true }, [])).toBeNull();
    expect(judgedReport(report(), { requires_changes: true }, [])).toMatchObject({
      status: 'blocked',
      reason: NO_CHANGES_REASON,
    });
    expect(judgedReport(report(), { requires_changes: true }, ['a.ts'])).toMatchObject({ status: 'passed' });
    expect(judgedReport(report(), undefined, [])).toMatchObject({ status: 'passed' });
  });

  test("an escalation's answer: a note for a retry, no evidence after an edit", () => {
    expect(retainedAfterEscalation({ choice: 'retry', text: 'try X' }, ['e'])).toEqual({
      evidence: ['e'],
      notes: ['try X'],
    });
    expect(retainedAfterEscalation({ choice: 'edit', text: 'new spec' }, ['e'])).toEqual({
      evidence: [],
      notes: [],
    });
  });

  test('a spec change from an answer', () => {
    const answer = { user: 'ada', answeredAt: '2026-01-01T00:00:00Z', text: 'use port 80' } as never;
    expect(specChangeOf('edit', answer)).toEqual({
      source: 'edit',
      by: 'ada',
      at: '2026-01-01T00:00:00Z',
      text: 'use port 80',
    });
  });

  test('the integration escalation names the failures and the tasks', () => {
    const q = integrationEscalation(2, 1, 3, [
      { ref: '2.1', note: 'it failed.' },
      { ref: '2.2', note: 'other' },
    ]);
    expect(q.id).toBe('esc-m2-integration-r1-3');
    expect(q.prompt).toBe(
      'Milestone 2 failed integration 3 times: it failed. Re-delegate 2.1, 2.2 again (optionally with a note in --text) or abort?',
    );
    expect(q.options).toEqual(['retry', 'abort']);
  });

  test('integration re-delegations: conflicts on top of the merged state, validation failures with their output', () => {
    expect(conflictRedelegations([{ ref: '1.2', files: ['a.ts', 'b.ts'] }], 'abc')).toEqual([
      {
        ref: '1.2',
        evidence: [],
        rebaseOnto: 'abc',
        note: 'Your branch conflicted with the integration branch in a.ts, b.ts; redo the task on top of the integrated state.',
      },
    ]);
    const failure = {
      text: 'tests',
      check: 'npm test',
      exitCode: 1,
      timedOut: false,
      outputPath: '/o.log',
      tail: 'boom',
    };
    expect(
      validationRedelegations(1, [failure], {
        rules: ['own-check'],
        tasks: [{ ref: '1.1', reasons: ['its own check'] }],
      }),
    ).toEqual([
      {
        ref: '1.1',
        evidence: ['/o.log'],
        note: 'Milestone 1 validation failed after integration: tests (`npm test`). It points at this task: its own check.',
        details: ['Output of `npm test` (exit 1), last lines:\nboom'],
      },
    ]);
  });
});
