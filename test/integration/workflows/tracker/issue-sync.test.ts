/**
 * The issue sync's decisions, in seconds: the real issueSyncWorkflow on Temporal's time-skipping test
 * server, started by a stand-in saga that uses the saga's real InteractionHub and IssueLink
 * (test/harness/workflows/tracker-parent.ts), against a tracker kept in memory
 * (test/harness/tracker-stand-ins.ts). Replies answer through the real answerFromIssue activity, i.e. the
 * stand-in saga's real respond Update and its validator.
 */
import { Worker } from '@temporalio/worker';
import { createSagaAnswerActivities } from '../../../../src/activities/tracker/saga-answers';
import type { InteractionRequest } from '../../../../src/domain/contract/state';
import { issueSyncWorkflowId } from '../../../../src/domain/tracker/issue-sync';
import type { TrackerRef } from '../../../../src/domain/tracker/tracker-ref';
import { WORKPAD_MARKER } from '../../../../src/domain/tracker/workpad';
import { recordHistory } from '../../../harness/histories';
import { createStandInSagaEnv, type StandInSagaEnv } from '../../../harness/stand-in-saga-env';
import { MemoryTracker, type TrackerScript } from '../../../harness/tracker-stand-ins';
import { issueSagaStandIn, type IssueSagaStandInInput } from '../../../harness/workflows/tracker-parent';

const QUEUE = 'issue-sync';
const ISSUE: TrackerRef = { kind: 'gitea', owner: 'alice', repo: 'demo', number: 3 };

const question: InteractionRequest = {
  id: 'planning-q1',
  kind: 'question',
  prompt: 'Which greeting?',
  options: ['hello', 'hi', 'hey'],
  recommended: 0,
};
const approval: InteractionRequest = {
  id: 'plan-approval-v1',
  kind: 'plan-approval',
  prompt: 'Approve the plan?',
  options: ['approve', 'revise', 'reject'],
  recommended: 0,
  textRequiredFor: ['revise'],
};

let sagas = 0;

async function runSync(fx: StandInSagaEnv, script: TrackerScript, scenario: Partial<IssueSagaStandInInput>) {
  const tracker = new MemoryTracker(script);
  tracker.addIssue(ISSUE, { title: 'Greet people', labels: ['saga'] });
  const name = `issue${++sagas}-${Date.now() % 100_000}`;
  const worker = await Worker.create({
    connection: fx.env.nativeConnection,
    taskQueue: QUEUE,
    workflowBundle: fx.workflowBundle,
    activities: { ...tracker.activities(), ...createSagaAnswerActivities() },
  });
  const input: IssueSagaStandInInput = {
    saga: {
      name,
      hostQueue: QUEUE,
      source: { ref: ISSUE, url: 'http://tracker.invalid/3', title: 'Greet people', request: 'untrusted' },
    },
    settings: {
      tracker: { kind: 'gitea', url: 'http://tracker.invalid', tokenEnv: 'GITEA_TOKEN' },
      questions: 'issue',
    },
    questions: [],
    updates: [],
    last: { phase: 'done', costUsd: 1.5 },
    ...scenario,
  };
  return worker.runUntil(async () => {
    const saga = await fx.env.client.workflow.start(issueSagaStandIn, {
      taskQueue: QUEUE,
      workflowId: `saga-${name}`,
      args: [input],
    });
    const sagaResult = await saga.result();
    const sync = fx.env.client.workflow.getHandle(issueSyncWorkflowId(name));
    await sync.result();
    // With RECORD_HISTORIES=1 the first case's history is kept for the replay test (one per version).
    if (sagas === 1) recordHistory('issueSyncWorkflow', await sync.fetchHistory());
    return { tracker, sagaResult, comments: tracker.issue(ISSUE).comments };
  });
}

describe('the issue sync (time-skipping test server)', () => {
  let fx: StandInSagaEnv;
  beforeAll(async () => {
    fx = await createStandInSagaEnv(
      require.resolve('../../../harness/workflows/tracker-parent'),
      'issue-sync',
    );
  }, 120_000);
  afterAll(async () => fx?.env.teardown());

  test('questions in one comment; a writer answers through the respond Update, a reader is ignored, a wrong option gets the error', async () => {
    const { sagaResult, comments, tracker } = await runSync(
      fx,
      {
        repliesToQuestions: [
          { author: 'carol', body: '/answer q1 3', canWrite: false },
          { author: 'bob', body: 'I think\n/answer q1 7', canWrite: true },
          { author: 'bob', body: '/answer q1 2 short is better', canWrite: true },
          { author: 'bob', body: '/approve', canWrite: true },
        ],
      },
      { questions: [question, approval] },
    );
    expect(sagaResult.answers).toEqual([
      expect.objectContaining({
        interactionId: 'planning-q1',
        choice: 'hi',
        text: 'short is better',
        user: 'gitea:bob',
      }),
      expect.objectContaining({ interactionId: 'plan-approval-v1', choice: 'approve', user: 'gitea:bob' }),
    ]);
    const asked = comments.filter((c) => c.body.includes('<!-- saga:questions'));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.body).toContain('**q1** (question)');
    expect(asked[0]!.body).toContain('**q2** (plan-approval)');
    expect(asked[0]!.body).toContain('2. hi');
    expect(asked[0]!.body).toContain('`/answer q1 2`');
    const notes = comments.filter((c) => c.body.includes('<!-- saga:note'));
    expect(notes).toHaveLength(2);
    expect(notes[0]!.body).toContain('by gitea:carol: only users with write access');
    expect(notes[1]!.body).toContain("q1: '7' is not an option of interaction 'planning-q1'");
    // Replies are read after the questions comment, not from the issue's first comment.
    expect(tracker.inputs('readIssueReplies')[0]!.afterCommentId).toBe(asked[0]!.id);
  });

  test('one workpad comment, edited in place; updates sent during a write are coalesced; a label per phase', async () => {
    const { comments, tracker } = await runSync(
      fx,
      { writeDelayMs: 400 },
      {
        updates: [
          { phase: 'implementation', problem: 'Greet people by name' },
          { milestones: [{ id: 1, title: 'Greeter', status: 'integrated', tasks: [] }] },
          { costUsd: 0.5 },
          { phase: 'review' },
        ],
        waitMs: 2_000,
        last: { phase: 'done', costUsd: 1.5 },
      },
    );
    const workpads = comments.filter((c) => c.body.includes(WORKPAD_MARKER));
    expect(workpads).toHaveLength(1);
    expect(workpads[0]!.body.startsWith(WORKPAD_MARKER)).toBe(true);
    expect(workpads[0]!.body).toContain('Greet people by name');
    expect(workpads[0]!.body).toContain('Greeter');
    // Six updates (planning, four at once, done): fewer writes, each after the last one ended.
    const writes = tracker.inputs('writeWorkpad');
    expect(writes.length).toBeLessThan(6);
    expect(writes.slice(1).every((w) => w.commentId === workpads[0]!.id)).toBe(true);
    const phases = tracker.inputs('setIssuePhase').map((p) => p.phase);
    expect(phases[0]).toBe('planning');
    expect(phases.at(-1)).toBe('done');
    expect(new Set(phases).size).toBe(phases.length);
    expect(tracker.issue(ISSUE).labels).toEqual(['saga', 'saga:done']);
  });

  // The test server does not skip an activity's retry waits (5 s, 10 s): two outages take 15 s.
  test('a tracker that fails the write-back (retryable) delays the workpad, never the saga', async () => {
    const { comments, tracker, sagaResult } = await runSync(fx, { failWrites: 2 }, {});
    const failed = tracker.calls.filter((c) => c.failed);
    expect(failed).toHaveLength(2);
    const firstWrite = tracker.calls.find((c) => c.name === 'writeWorkpad' && !c.failed)!;
    // The saga ended before the tracker took its first write.
    expect(sagaResult.endedAtMs).toBeLessThan(firstWrite.atMs);
    expect(comments.filter((c) => c.body.includes(WORKPAD_MARKER))).toHaveLength(1);
    expect(tracker.issue(ISSUE).labels).toContain('saga:done');
  });
});
