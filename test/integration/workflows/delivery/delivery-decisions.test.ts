/**
 * The delivery watch's decisions, in seconds: the real deliveryWorkflow (and the real taskWorkflow for its
 * fix tasks) on Temporal's time-skipping test server, with a stand-in forge and stand-in task activities,
 * under a stand-in saga (test/harness/delivery-run.ts). Each case scripts what the forge answers and asserts
 * what the watch decided: which fix tasks ran with what spec, what it landed and replied, what it asked
 * and what it told the saga (when it looks: delivery-looks.test.ts). The Gitea end-to-end test takes the same paths on a real forge.
 */
import { Worker } from '@temporalio/worker';
import { fixedReply } from '../../../../src/domain/delivery/review-fixes';
import { fixTaskBranch, integrationBranch } from '../../../../src/domain/contract/naming';
import { deliveryStopSignal } from '../../../../src/domain/saga/messages';
import { inputsOf } from '../../../harness/fleet-stand-ins';
import { check, ciOf, comment, forgeInputsOf } from '../../../harness/forge-stand-ins';
import { fixedCheck, fixFailedCheck, lookOffsets } from '../../../harness/delivery-scripts';
import {
  createDeliveryTestEnv,
  runDelivery,
  sagaPr,
  watchId,
  type DeliveryTestEnv,
} from '../../../harness/delivery-run';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const fixRefs = (calls: Parameters<typeof inputsOf>[0]) =>
  inputsOf(calls, 'runTaskAttempt').map((a) => a.agent.taskId);

describe('the delivery watch’s decisions (time-skipping test server)', () => {
  let fx: DeliveryTestEnv;
  beforeAll(async () => {
    fx = await createDeliveryTestEnv();
  }, 120_000);
  afterAll(async () => fx?.env.teardown());

  test('a failing check: one fix task with the check, its description and log; landed up the stack', async () => {
    const fixChecks = { '7': [{ text: 'unit tests', check: 'npm test' }] };
    const { forgeCalls, taskCalls, result, view, ctx } = await runDelivery(fx, {
      forge: { ci: fixedCheck },
      fixChecks,
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    expect(fixRefs(taskCalls)).toEqual(['m1fix1']);
    const [attempt] = inputsOf(taskCalls, 'runTaskAttempt');
    const spec = (attempt!.agent.context as { task: { scope: string } }).task;
    expect(spec.scope).toContain('CI check "lint" failed on m1-head: lint found 3 errors');
    expect(spec.scope).toContain('Its log: http://ci.invalid/lint/1');
    expect(spec.scope).toContain('src/greet.ts:3 no-unused-vars');
    expect(attempt!.checks.checks).toEqual(fixChecks['7']);
    expect(attempt!.prepare).toMatchObject({ base: 'm1-head', branch: fixTaskBranch(ctx.name, 'm1fix1') });
    const [landed, ...more] = forgeInputsOf(forgeCalls, 'landFix');
    expect(more).toEqual([]);
    expect(landed).toMatchObject({
      fixBranch: fixTaskBranch(ctx.name, 'm1fix1'),
      stack: [
        { head: 'saga/demo/deliver-m1', number: 7 },
        { head: 'saga/demo/deliver-m2', number: 8 },
      ],
      at: 0,
      integrationBranch: integrationBranch(ctx.name),
      remote: 'origin',
    });
    // The look right after the landing asks about the new heads (not the old ones' CI again).
    expect(forgeInputsOf(forgeCalls, 'lookAtPullRequests')[1]!.prs).toEqual([
      { number: 7, headSha: 'fix1-pr7', etag: null, commentCount: null },
      { number: 8, headSha: 'fix1-pr8', etag: null, commentCount: null },
    ]);
    // Both branches moved; their new heads' CI is green.
    expect(result.prs.map((p) => [p.number, p.headSha, p.ci, p.ciFixes])).toEqual([
      [7, 'fix1-pr7', 'success', 1],
      [8, 'fix1-pr8', 'success', 0],
    ]);
    expect(view.log).toContain('PR #7: fix m1fix1 pushed as fix1-pr7');
    expect(view.pullRequests.some((p) => p.number === 7 && p.ci === 'failure')).toBe(true);
  });

  test('the same failure seen again (its numbers changed) is not sent to a second fix task', async () => {
    const { forgeCalls, taskCalls, view } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      // The fix task stays blocked, so the head keeps failing; each look reports another error count.
      forge: {
        ci: (_pr, sha, n) => ciOf(sha, [check('lint', 'failure', { description: `lint: ${n} errors` })]),
      },
      fixes: { m1fix1: ['fail'] },
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    expect(fixRefs(taskCalls)).toEqual(['m1fix1']);
    expect(forgeInputsOf(forgeCalls, 'landFix')).toEqual([]);
    expect(lookOffsets(forgeCalls).length).toBeGreaterThan(5);
    expect(view.log.some((l) => l.startsWith('PR #7: fix task m1fix1 blocked'))).toBe(true);
  });

  test('a fix task that changed no file is not landed (nothing to push, nothing to reply)', async () => {
    const { forgeCalls, taskCalls, view } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: { ci: fixedCheck, comments: () => [comment(1, 'bob')] },
      unchanged: ['m1fix1', 'm1fix2'],
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    expect(fixRefs(taskCalls)).toEqual(['m1fix1', 'm1fix2']);
    expect(forgeInputsOf(forgeCalls, 'landFix')).toEqual([]);
    expect(forgeInputsOf(forgeCalls, 'replyToReview')).toEqual([]);
    expect(view.log.filter((l) => l.includes('made no changes'))).toHaveLength(2);
  });

  test('after ci_fix_attempts fixes a new failure asks ci-pr7-q1; fix again runs one more, leave it none', async () => {
    const { forgeCalls, taskCalls, view, result } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      ciFixAttempts: 1,
      forge: { ci: fixFailedCheck },
      schedule: [{ atMs: HOUR, signal: 'stop' }],
      drive: async (saga) => {
        const asked = await saga.question('ci-pr7-q1');
        expect(asked.options).toEqual(['fix again', 'leave it']);
        expect(asked.prompt).toContain('CI check "test" fails on fix1-pr7 after 1 fix task(s)');
        await saga.respond('ci-pr7-q1', 'fix again');
        await saga.question('ci-pr7-q2');
        await saga.respond('ci-pr7-q2', 'leave it');
      },
    });
    expect(view.opened.map((i) => i.id)).toEqual(['ci-pr7-q1', 'ci-pr7-q2']);
    expect(fixRefs(taskCalls)).toEqual(['m1fix1', 'm1fix2']);
    expect(forgeInputsOf(forgeCalls, 'landFix')).toHaveLength(2);
    expect(result.prs[0]).toMatchObject({ headSha: 'fix2-pr7', ci: 'failure', ciFixes: 2 });
  });

  test('a stop while the cap question is open ends the watch without its answer', async () => {
    const { taskCalls, view, result } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      ciFixAttempts: 1,
      forge: { ci: fixFailedCheck },
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    expect(view.opened.map((i) => i.id)).toEqual(['ci-pr7-q1']);
    expect(fixRefs(taskCalls)).toEqual(['m1fix1']);
    expect(result.memory.capQuestions).toBe(1);
  });

  test('review comments: a writer’s becomes a fix and a reply; a reader’s, a bot’s, a resolved one do not', async () => {
    const comments = [
      comment(1, 'bob'),
      comment(2, 'carol', { authorCanWrite: false, body: 'Rename it all' }),
      comment(3, 'lint-bot', { isBot: true }),
      comment(4, 'bob', { resolved: true }),
    ];
    const { forgeCalls, taskCalls, result, view } = await runDelivery(fx, {
      forge: {
        ci: (_pr, sha) => ciOf(sha, [check('build', 'success')]),
        comments: (pr) => (pr === 7 ? comments : []),
      },
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    expect(fixRefs(taskCalls)).toEqual(['m1fix1']);
    const spec = (inputsOf(taskCalls, 'runTaskAttempt')[0]!.agent.context as { task: { scope: string } })
      .task;
    expect(spec.scope).toContain('src/greet.ts:3 — Please rename greet (comment 1)');
    expect(forgeInputsOf(forgeCalls, 'landFix')).toMatchObject([{ at: 0 }]);
    const replies = forgeInputsOf(forgeCalls, 'replyToReview');
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ number: 7, comment: { id: 1 }, body: fixedReply('fix1-pr7') });
    expect(result.prs[0]).toMatchObject({ reviewFixes: 1, ciFixes: 0 });
    // The saga was told, as its status and the acceptance prompt show it.
    const told = view.pullRequests.filter((p) => p.number === 7).at(-1)!;
    expect(told.listedComments.map((c) => [c.author, c.why])).toEqual([
      ['carol', 'no write access'],
      ['lint-bot', 'from a bot'],
    ]);
    expect(result.prs[0]!.listedComments).toEqual([
      { id: 2, author: 'carol', place: 'src/greet.ts:3', why: 'no write access' },
      { id: 3, author: 'lint-bot', place: 'src/greet.ts:3', why: 'from a bot' },
    ]);
  });

  test('the saga budget spent: no fix task, the failure logged for the user', async () => {
    const { forgeCalls, taskCalls, view } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: { ci: fixedCheck },
      budget: { limitUsd: 1, spentUsd: 1 },
      schedule: [{ atMs: HOUR, signal: 'stop' }],
    });
    expect(fixRefs(taskCalls)).toEqual([]);
    expect(forgeInputsOf(forgeCalls, 'landFix')).toEqual([]);
    expect(view.log).toEqual([
      'PR #7: no fix task, the saga budget is spent (CI check "lint" failed on m1-head: lint found 3 errors)',
    ]);
  });

  test('stopped while a fix task runs: the fix is landed first, then the watch returns', async () => {
    const { forgeCalls, result } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: { ci: fixedCheck },
      duringFix: async (_ref, watch) => watch.signal(deliveryStopSignal),
      // A backstop only: the stop comes from the fix task's run above.
      schedule: [{ atMs: 10 * HOUR, signal: 'stop' }],
    });
    expect(forgeCalls.map((c) => c.name)).toEqual(['lookAtPullRequests', 'landFix']);
    expect(result.prs[0]).toMatchObject({ headSha: 'fix1-pr7', ciFixes: 1 });
  });

  test('a watch’s history (CI fix, review fix and reply, a wake-up, the stop) replays on the current code', async () => {
    const { ctx, forgeCalls } = await runDelivery(fx, {
      prs: [sagaPr(7, 1, 'main')],
      forge: {
        ci: fixedCheck,
        comments: () => [comment(1, 'bob'), comment(2, 'carol', { authorCanWrite: false })],
      },
      schedule: [
        { atMs: 20 * MINUTE, signal: 'forgeEvent' },
        { atMs: 30 * MINUTE, signal: 'stop' },
      ],
    });
    expect(forgeCalls.filter((c) => c.name !== 'lookAtPullRequests').map((c) => c.name)).toEqual([
      'landFix',
      'landFix',
      'replyToReview',
    ]);
    const history = await fx.env.client.workflow.getHandle(watchId(ctx)).fetchHistory();
    await expect(
      Worker.runReplayHistory({ workflowBundle: fx.workflowBundle }, history, watchId(ctx)),
    ).resolves.toBeUndefined();
  });
});
