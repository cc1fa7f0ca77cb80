/**
 * A `D<n>: …` correction reported at acceptance: the fix task's spec (what its implementer is given) says
 * what D<n> asked, what the saga chose and the user's correction, and SAGA.md's rationale block shows the
 * corrected choice with a note that it was corrected at acceptance.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { oneTaskPlan, runContext, startModesSaga } from '../../../harness/modes-helpers';
import { waitFor } from '../../../harness/wait';

jest.setTimeout(300_000);

describe('a decision corrected at acceptance', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('record-corrections');
  });
  afterAll(async () => env.close());

  test("the fix task's spec carries D1's question, choice and correction; SAGA.md shows the correction", async () => {
    const saga = await startModesSaga(env, {
      name: 'correct-d1',
      args: '--autonomous Add a greeting',
      script: {
        planner: {
          problem: 'Greet people.',
          questions: [],
          decisions: [
            {
              question: 'Module format',
              choice: 'CommonJS',
              citation: 'codebase pattern: package.json',
              confident: true,
              substantive: true,
            },
          ],
          plan: oneTaskPlan(),
        },
      },
    });
    await waitForPending(env, saga.name, 'plan-approval-1');
    await saga.answer('plan-approval-1', 'approve');
    await waitForPending(env, saga.name, 'acceptance-1', 150_000);
    const sagaMd = () => readFileSync(path.join(saga.sagaDir, 'SAGA.md'), 'utf8');
    expect(sagaMd()).toContain('- **Module format:** CommonJS — codebase pattern: package.json');

    await saga.answer('acceptance-1', 'report issues', 'D1: ES modules :: check: true');

    // The fix task's implementer is told what D1 was, not only "D1: ES modules".
    const promptFile = path.join(saga.sagaDir, 'runs', 'm2t1-d1-a1', 'prompt.md');
    await waitFor('the fix task to start', () => existsSync(promptFile), 150_000);
    const task = runContext(saga.sagaDir, 'm2t1-d1-a1').task as { scope: string; title: string };
    expect(task.title).toBe('D1: ES modules');
    expect(task.scope).toContain('Correct autonomous decision D1. The question: Module format.');
    expect(task.scope).toContain('The saga chose: CommonJS (codebase pattern: package.json).');
    expect(task.scope).toContain('The user corrected it at acceptance to: ES modules.');

    // SAGA.md's rationale block: the corrected choice, noted as corrected at acceptance; the old one gone.
    await waitFor(
      'SAGA.md to show the correction',
      () => sagaMd().includes('ES modules — corrected by'),
      30_000,
    );
    const rationale = sagaMd();
    expect(rationale).toContain(
      '- **Module format:** ES modules — corrected by tester at acceptance round 1 (D1; was "CommonJS", ' +
        'codebase pattern: package.json; [LRN:correction] in decisions.md)',
    );
    expect(rationale).not.toContain('- **Module format:** CommonJS');

    await env.client.workflow.getHandle(sagaWorkflowId(saga.name)).cancel();
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled', 120_000);
  });
});
