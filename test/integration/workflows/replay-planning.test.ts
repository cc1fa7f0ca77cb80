/**
 * Replays the newest kept histories of planning (the saga's first run: intake, then the planning workflow with
 * discovery, two question rounds, a revise and approval, then continue-as-new at the phase boundary) on the
 * current workflow code, offline, and checks they are the run they claim to be. A change that breaks replay
 * fails here and in replay.test.ts, which replays every kept version (README: Versioning).
 */
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { latestHistoryFile, loadHistory } from '../../harness/histories';
import { WORKFLOW_BUNDLE } from '../../harness/server';

type History = ReturnType<typeof loadHistory>;

const workflowType = (h: History) =>
  h.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
const count = (h: History, pick: (e: NonNullable<History['events']>[number]) => unknown) =>
  (h.events ?? []).filter((e) => !!pick(e)).length;
const activityNames = (h: History) =>
  (h.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

describe('replay of the recorded planning phase', () => {
  beforeAll(() => {
    try {
      Runtime.install({ logger: new DefaultLogger('ERROR') });
    } catch {
      /* already installed in this process */
    }
  });

  const saga = loadHistory(latestHistoryFile('sagaWorkflow'));
  const planning = loadHistory(latestHistoryFile('planningWorkflow'));

  test('the fixtures are the planning run they claim to be', () => {
    expect(workflowType(saga)).toBe('sagaWorkflow');
    expect(workflowType(planning)).toBe('planningWorkflow');
    // Planner: three question rounds (the last one empty), the exit criteria, one plan, one revise;
    // discovery first.
    const planned = activityNames(planning);
    expect(planned[0]).toBe('discoverEnvironment');
    expect(planned.filter((a) => a === 'runRoleAgent')).toHaveLength(6);
    expect(planned.filter((a) => a === 'writeSpecTree')).toHaveLength(2);
    // Answers reached the planning workflow: 7 questions and 2 plan approvals.
    expect(
      count(
        planning,
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'interactionAnswered',
      ),
    ).toBe(9);
    // The saga accepted 10 answers (confirm-name included) and ran planning; at the phase boundary it
    // continued as new from its state (implementation runs in the next run).
    expect(count(saga, (e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toBe(10);
    expect(
      (saga.events ?? []).flatMap(
        (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name ?? [],
      ),
    ).toEqual(['planningWorkflow']);
    expect(saga.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  });

  test('both histories replay on the current workflow code', async () => {
    const results = Worker.runReplayHistories({ workflowBundle: { codePath: WORKFLOW_BUNDLE } }, [
      { workflowId: 'saga', history: saga },
      { workflowId: 'planning', history: planning },
    ]);
    const outcomes: { workflowId: string; error: string | null }[] = [];
    for await (const r of results)
      outcomes.push({ workflowId: r.workflowId, error: r.error ? String(r.error) : null });
    expect(outcomes).toEqual([
      { workflowId: 'saga', error: null },
      { workflowId: 'planning', error: null },
    ]);
  });
});
