/**
 * Unachievable validation (docs/PROCEDURE.md §5.2), against the real server, real git and the demo
 * agent: an exit criterion whose check cannot run is noted (PROGRESS.md's Decisions & Deviations,
 * decisions.md), escalated to the user, and the spec (SAGA.md, `saga status`) carries the finding and the
 * user's decision; a replaced check is run before acceptance.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { oneTaskPlan, startModesSaga } from '../../../harness/modes-helpers';

async function waitForFile(file: string, ok: (text: string) => boolean, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (ok(text)) return text;
    if (Date.now() > deadline) throw new Error(`${file} never matched; it holds:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('unachievable validation', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('unachievable');
  });
  afterAll(async () => env.close());

  test('a criterion that cannot be checked: finding noted, escalated, the spec updated with your answer', async () => {
    const plan = oneTaskPlan() as { exit_criteria: unknown[] } & Record<string, unknown>;
    const saga = await startModesSaga(env, {
      name: 'unachievable',
      args: 'Add a greeting',
      plan: {
        ...plan,
        exit_criteria: [
          ...plan.exit_criteria,
          { id: 'E2', text: 'Works on the kiosk', check: 'no-such-kiosk-tool --verify' },
        ],
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');

    const asked = await waitForPending(env, saga.name, /^(unachievable|acceptance)-/, 150_000);
    expect(asked.pending.map((p) => p.id)).toEqual(['unachievable-r1-e2']);
    const question = asked.pending[0]!;
    expect(question).toMatchObject({ options: ['new check', 'verify by hand', 'drop'], recommended: 0 });
    const finding =
      'its check `no-such-kiosk-tool --verify` cannot run with the tools here: the command is not found (exit 127)';
    expect(question.prompt).toContain(
      `Exit criterion E2 "Works on the kiosk" cannot be checked: ${finding}.`,
    );
    // Noted before the user is asked: a deviation in PROGRESS.md and an entry in decisions.md.
    const progress = await waitForFile(path.join(saga.sagaDir, 'PROGRESS.md'), (t) =>
      t.includes('Deviation: exit criterion E2'),
    );
    expect(progress).toContain(
      `Deviation: exit criterion E2 (Works on the kiosk) cannot be checked: ${finding}`,
    );
    expect(saga.decisions()[0]).toMatchObject({
      title: 'Unachievable validation (round 1): E2 cannot be checked',
      lines: [`- E2 Works on the kiosk: ${finding}; escalated to the user`],
    });

    await saga.answer('unachievable-r1-e2', 'new check', 'test -f src/greet.js');
    const accepting = await waitForPending(env, saga.name, 'acceptance-1', 60_000);
    // The replaced check ran on the integrated result before acceptance.
    expect(accepting.pending[0]!.prompt).toContain('(exit criteria: E1 passed, E2 passed)');
    expect(accepting.planSummary!.exitCriteria[1]).toBe(
      `E2: Works on the kiosk (${finding}; replaced by tester with this check)`,
    );
    const spec = await waitForFile(path.join(saga.sagaDir, 'SAGA.md'), (t) => t.includes('finding:'));
    expect(spec).toContain(
      `| E2 | Works on the kiosk — finding: ${finding}; replaced by tester with this check | \`test -f src/greet.js\` |`,
    );
    await saga.answer('acceptance-1', 'accept');
    await waitForStatus(env, saga.name, (s) => s.phase === 'complete', 60_000);
  }, 300_000);
});
