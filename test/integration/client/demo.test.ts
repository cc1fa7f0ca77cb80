/**
 * The README's first command: `saga demo` runs a whole saga on a generated sample repo with the demo agent
 * and ends complete, printing where to look. (Here it reuses the test run's server, as it reuses any
 * server already answering at TEMPORAL_ADDRESS.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { runSaga } from '../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';

jest.setTimeout(240_000);

/**
 * Events in the demo saga workflow's history, its runs together (4 tasks, 7 answers): 422 before chat
 * notifications went only where chat is set up and decisions.md moved to the projector, 354 after; 194 since
 * the implementation phase keeps its task states, a host without chat is asked once per saga, the saga runs
 * acceptance itself, phases hand their last progress over with their result, search attribute changes of
 * one workflow task go out as one upsert and the saga's end is one activity (2026-12-02); 199 with the exit
 * criteria's own planner step and the checks at acceptance (2026-12-03). On a loaded machine the server runs
 * one more workflow task between an answer and its signal to the phase that asked (3 events; measured
 * 2026-12-03: 199 quiet, 202 with the cores busy, the same on the code before and after the restructuring),
 * so the limit leaves room for two. The `projector-queue` patch adds one marker event to each of the saga's
 * three runs (2026-12-04: 208 seen with the cores busy). The saga's end waits for its projector to confirm
 * its cancellation (`projector-ends-first`, so none reports to a closed run): a marker, the cancellation and
 * one more workflow task in the last run (2026-12-06: 212 seen with the cores busy). The patches of the procedure's
 * fourth round (`parallel-any-profile` at intake, `by-hand-verified` at validation and acceptance) add a marker
 * each where they are first met (2026-12-06: 214 seen). The goal of 40 + 6 per task + 10 per interaction =
 * 134 is not reached (bench/README.md says why); this keeps what is won. The `quiet-answered-at-once` patch
 * (issue 46) adds a marker in each run where an interaction opens, up to three (2026-12-06: 219 seen with the
 * cores busy, in a clean-clone CI run).
 */
const DEMO_SAGA_EVENTS_LIMIT = 220;

describe('saga demo', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('demo');
  });
  afterAll(async () => env.close());

  test('completes a whole saga and prints the report and where to look', async () => {
    const demo = await runSaga(['demo'], env.cliEnv, 200_000);
    expect(demo.stderr).not.toMatch(/unexpected error/);
    // The saga's end cancels its PROGRESS.md projector: a cancellation, never a failed activity on screen.
    expect(`${demo.stdout}${demo.stderr}`).not.toMatch(/Activity failed/);
    // No SDK WARN block: a fresh session is the task's status note, and no projector outlives its saga.
    expect(`${demo.stdout}${demo.stderr}`).not.toMatch(/WARN/);
    expect(demo.code).toBe(0);
    const out = demo.stdout;
    // What it asked, as a user would see it.
    for (const kind of ['confirm-name', 'question', 'plan-approval', 'acceptance'])
      expect(out).toContain(`? [${kind}]`);
    expect(out).toContain('Task 1.1 add-greet: passed after 2 attempt(s)');
    expect(out).toContain('reported 1 issue(s); starting round 2');
    expect(out).toMatch(/Saga demo-\S+: complete in \d+s\./);
    const report = /Report:\s+(\S+)/.exec(out)?.[1];
    expect(report && existsSync(report)).toBe(true);
    // What was built, per milestone, with each task's diff stat and its agent's own summary.
    const reportText = readFileSync(report!, 'utf8');
    expect(reportText).toContain('### Milestone 1: Core library — integrated');
    expect(reportText).toMatch(
      /\*\*1\.1 Add greet\(\)\*\* \(integrated, `[0-9a-f]+`\): 2 files changed, \+9 −0 lines .*The agent's summary: Added greet\(name\) in src\/greet\.js/,
    );

    // The saga workflow's history stays lean (its runs together).
    const name = /Saga (demo-\S+): complete/.exec(out)![1]!;
    const runs: string[] = [];
    for await (const run of env.client.workflow.list({ query: `WorkflowId = 'saga-${name}'` }))
      runs.push(run.runId);
    const events = await Promise.all(
      runs.map(
        async (runId) =>
          (await env.client.workflow.getHandle(`saga-${name}`, runId).fetchHistory()).events ?? [],
      ),
    );
    const all = events.flat();
    const answers = all.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
    expect({ runs: runs.length, answers }).toEqual({ runs: 3, answers: 7 });
    expect(all.length).toBeLessThanOrEqual(DEMO_SAGA_EVENTS_LIMIT);
    // No activity per notification without chat (the host is asked once; again only after 10 minutes, and the
    // saga's next runs know the answer), none per decisions.md entry.
    const activities = all.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activities.filter((a) => ['notifyAnswered', 'prependDecision'].includes(a))).toEqual([]);
    expect(activities.filter((a) => a === 'notifyInteraction')).toHaveLength(1);
    // Task and milestone states stay in the implementation phase: no progress signal from it reaches the saga.
    const progressFrom = all.flatMap((e) => {
      const signal = e.workflowExecutionSignaledEventAttributes;
      return signal?.signalName?.startsWith('progress') ? [signal.externalWorkflowExecution?.workflowId] : [];
    });
    expect(progressFrom.filter((id) => id?.includes('-implementation'))).toEqual([]);
    // Acceptance only asks: the saga asks itself, no child workflow per round.
    const children = all.flatMap(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name ?? [],
    );
    expect(children).not.toContain('acceptanceWorkflow');
  });
});
