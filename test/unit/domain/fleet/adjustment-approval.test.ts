/** A planner adjustment of checks or scope is the user's to approve; what --autonomous records instead. */
import {
  adjustmentQuestion,
  autonomousSpecChanges,
  decidingFields,
  rejectedAdjustment,
} from '../../../../src/domain/fleet/adjustment-approval';
import { adjustmentHow } from '../../../../src/domain/fleet/spec-changes';
import { nextStepWhenBlocked } from '../../../../src/domain/fleet/blocked-report';
import type { SpecChange } from '../../../../src/domain/contract/state';

const change = (patch: SpecChange['patch'], extra: Partial<SpecChange> = {}): SpecChange => ({
  source: 'adjusted',
  by: 'planner',
  at: '2026-01-01T00:00:00.000Z',
  text: 'validation: `npm test`',
  patch,
  ...extra,
});

describe('planner adjustments that change what decides a task', () => {
  test('checks and scope decide; interfaces and evidence do not', () => {
    expect(decidingFields({ validation: [{ text: 't', check: 'npm test' }], scope: 's' })).toEqual([
      'validation',
      'scope',
    ]);
    expect(decidingFields({ interfaces: 'x', evidence: 'y' })).toEqual([]);
    expect(decidingFields(undefined)).toEqual([]);
  });

  test('the question shows the change and takes approve, edit (in the edit format) or reject', () => {
    const q = adjustmentQuestion(
      { ref: '1.1', key: 'm1t1', title: 'Greet', delegation: 3 },
      'Check failed: greet',
      change({ validation: [{ text: 't', check: 'npm test' }] }),
    );
    expect(q).toMatchObject({
      id: 'adj-m1t1-d3',
      kind: 'escalation',
      options: ['approve', 'edit', 'reject'],
      textRequiredFor: ['edit'],
      textFormat: 'spec-edit',
    });
    expect(q.prompt).toContain('stayed blocked in 2 delegations (Check failed: greet)');
    expect(q.prompt).toContain('The planner proposes to change its checks: validation: `npm test`');
    expect(rejectedAdjustment('ada', change({}), 'keep the strict test')).toBe(
      "ada rejected the planner's adjustment (validation: `npm test`): keep the strict test",
    );
  });

  test('how each adjustment came about, and the autonomous ones acceptance lists', () => {
    expect(adjustmentHow(2, change({}, { by: 'planner, approved by ada' }))).toBe(
      'blocked in 2 delegations in a row; the planner adjusted its spec (planner, approved by ada).',
    );
    expect(adjustmentHow(2, change({}, { source: 'edit', by: 'ada' }))).toContain(
      "ada edited the spec in place of the planner's adjustment",
    );
    const auto = change({ scope: 's' }, { autonomous: true, by: 'planner (--autonomous)' });
    const listed = autonomousSpecChanges([
      { tasks: [{ id: '1.1', specChanges: [change({}), auto] }, { id: '1.2' }] },
    ]);
    expect(listed).toEqual([
      expect.stringMatching(/^task 1\.1: validation: `npm test` \(spec adjusted by planner \(--autonomous\)/),
    ]);
    const many = autonomousSpecChanges([{ tasks: [{ id: '1.1', specChanges: Array(12).fill(auto) }] }]);
    expect(many).toHaveLength(11);
    expect(many[10]).toBe('2 more in decisions.md');
  });

  test('a timed-out, hung or crashed agent takes the adjustment path after re-delegation, as failed checks do', () => {
    const blocked = { streak: 2, retryable: true, checksFailed: false };
    expect(nextStepWhenBlocked(blocked)).toBe('ask');
    expect(nextStepWhenBlocked({ ...blocked, agentFailed: true })).toBe('adjust');
    expect(nextStepWhenBlocked({ ...blocked, streak: 1, agentFailed: true })).toBe('redelegate');
    expect(nextStepWhenBlocked({ ...blocked, streak: 3, agentFailed: true })).toBe('ask');
    expect(nextStepWhenBlocked({ ...blocked, retryable: false, agentFailed: true })).toBe('ask');
  });
});
