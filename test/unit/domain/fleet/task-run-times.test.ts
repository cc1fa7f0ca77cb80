/** A task's run times as the fleet stamps them: entering `running` starts a run, leaving it ends it. */
import { initialTaskState, withRunTimes } from '../../../../src/domain/fleet/fleet';
import type { PlanMilestone, PlanTask } from '../../../../src/domain/plan';

const task: PlanTask = {
  id: 2,
  slug: 'b',
  title: 'B',
  depends_on: ['1.1'],
  scope: 's',
  owns: ['b.txt'],
  interfaces: '',
  validation_method: 'm',
  validation: [{ text: 't', check: 'true' }],
  evidence: 'e',
};
const milestone = { id: 1, slug: 'm', title: 'M', depends_on: [], goal: 'g', validation: [], tasks: [task] };

test('a task keeps its plan dependencies as refs', () => {
  expect(initialTaskState('s', milestone as PlanMilestone, task).dependsOn).toEqual(['1.1']);
  expect(initialTaskState('s', milestone as PlanMilestone, { ...task, depends_on: [] })).not.toHaveProperty(
    'dependsOn',
  );
});

test('running stamps startedAt and clears endedAt; leaving running stamps endedAt; other changes none', () => {
  const pending = initialTaskState('s', milestone as PlanMilestone, task);
  const started = { ...pending, ...withRunTimes(pending, { status: 'running' }, 'T1') };
  expect([started.startedAt, started.endedAt]).toEqual(['T1', null]);
  expect(withRunTimes(started, { attempts: 2 }, 'T2')).toEqual({ attempts: 2 });
  expect(withRunTimes(started, { status: 'running' }, 'T2')).toEqual({ status: 'running' });
  const passed = { ...started, ...withRunTimes(started, { status: 'passed' }, 'T3') };
  expect([passed.startedAt, passed.endedAt]).toEqual(['T1', 'T3']);
  // integrated after passed is not the end of a run: the end stays when the agent stopped
  expect(withRunTimes(passed, { status: 'integrated' }, 'T4')).toEqual({ status: 'integrated' });
  const again = { ...passed, ...withRunTimes(passed, { status: 'running' }, 'T5') };
  expect([again.startedAt, again.endedAt]).toEqual(['T5', null]);
});
