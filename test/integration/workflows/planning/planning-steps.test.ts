/**
 * The planning steps of docs/PROCEDURE.md §2 in their order, against the real server with the
 * demo agent as the planner: the planner's restatement of the request shown with its first question and
 * recorded; the exit criteria written by their own planner step before the decomposition, which keeps them;
 * a question without a recommended option refused and asked again.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { greetingPlan } from '../../../../src/demo/sample-repo';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { runContext, startModesSaga } from '../../../harness/modes-helpers';

const AGREED = [{ id: 'E1', text: 'greet() greets by name', check: 'node --test test/greet.test.js' }];

describe('planning steps in the order of docs/PROCEDURE.md §2', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('planning-steps');
  });
  afterAll(async () => env.close());

  test('restatement before the first question; exit criteria from their own step, kept by the decomposition', async () => {
    const saga = await startModesSaga(env, {
      name: 'steps-order',
      args: 'Add a greeting',
      script: {
        planner: {
          problem: 'The sample library has no way to greet a person by name.',
          shape: 'A greet(name) function in src/greet.js with its unit test.',
          unknowns: ['What greet() says without a name.'],
          questions: [
            [
              { id: 'style', text: 'Punctuation?', options: ['Hello, NAME!', 'Hello NAME'], recommended: 0 },
              { id: 'empty', text: 'No name?', options: ['Hello, world!', 'an error'], recommended: 1 },
            ],
          ],
          criteria: { exit_criteria: AGREED },
          // The decomposition answers with other criteria (two of them): the agreed ones stand.
          plan: greetingPlan(),
        },
      },
    });
    const asked = await waitForPending(env, saga.name, 'q1-style');
    const [first, second] = ['q1-style', 'q1-empty'].map((id) => asked.pending.find((p) => p.id === id)!);
    expect(first!.prompt.split('\n')).toEqual([
      "The planner's restatement of your request:",
      'Problem: The sample library has no way to greet a person by name.',
      'Rough shape: A greet(name) function in src/greet.js with its unit test.',
      'Major unknowns:',
      '- What greet() says without a name.',
      '',
      'Punctuation?',
    ]);
    expect(second!.prompt).toBe('No name?');
    expect(saga.decisions()[0]).toMatchObject({
      title: 'Intake restatement by the planner',
      lines: expect.arrayContaining(['Problem: The sample library has no way to greet a person by name.']),
    });
    await saga.answer('q1-style', 'Hello, NAME!');
    await saga.answer('q1-empty', 'an error');

    const approval = await waitForPending(env, saga.name, 'plan-approval-1');
    // Step 4 before step 5: a planner run of its own writes the criteria, then the decomposition runs.
    const stages = saga
      .runs()
      .filter((r) => r.role === 'planner')
      .map((r) => r.stage);
    expect(stages).toEqual(['questions', 'questions', 'criteria', 'plan']);
    expect(runContext(saga.sagaDir, 'planner-criteria-1-1-a1').answers).toEqual([
      { question: 'Punctuation?', answer: 'Hello, NAME!' },
      { question: 'No name?', answer: 'an error' },
    ]);
    expect(runContext(saga.sagaDir, 'planner-plan-1-1-a1').exit_criteria).toEqual(AGREED);
    expect(approval.planSummary!.exitCriteria).toEqual(['E1: greet() greets by name']);
    const sagaMd = readFileSync(path.join(saga.sagaDir, 'SAGA.md'), 'utf8');
    expect(sagaMd).toContain('| E1 | greet() greets by name | `node --test test/greet.test.js` |');
    expect(sagaMd).not.toContain('| E2 |');
    await saga.answer('plan-approval-1', 'reject');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });

  test('a question without a recommended option is invalid: the planner is told why and asked again', async () => {
    const saga = await startModesSaga(env, {
      name: 'steps-recommend',
      args: 'Add a greeting',
      script: {
        planner: {
          questions: [[{ id: 'style', text: 'Punctuation?', options: ['Hello, NAME!', 'Hello NAME'] }]],
          plan: greetingPlan(),
        },
      },
    });
    const stuck = await waitForPending(env, saga.name, 'planner-invalid-questions-1-1');
    expect(stuck.pending.map((p) => p.id)).toEqual(['planner-invalid-questions-1-1']);
    expect(stuck.pending[0]!.prompt).toContain(
      'questions.0.recommended: the 0-based index of the option you recommend is required',
    );
    expect(runContext(saga.sagaDir, 'planner-questions-1-1-a2').previousErrors).toEqual([
      'questions.0.recommended: the 0-based index of the option you recommend is required',
    ]);
    await saga.answer('planner-invalid-questions-1-1', 'abort');
    await waitForStatus(env, saga.name, (s) => s.phase === 'cancelled');
  });
});
