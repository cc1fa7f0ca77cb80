/**
 * Acceptance fixes are validated (docs/PROCEDURE.md §6.2, §6.3), against the real server with the demo
 * agent: an issue reported with its check becomes a task whose check runs (a first no-op attempt fails it,
 * the fix passes it); an issue reported without one is asked for one, and answered `none` (review only); its
 * no-op agent ends blocked "made no changes" after one re-delegation and is escalated, never integrated.
 * Bad report text and a bad check are refused with a clear message and change nothing.
 */
import { readFileSync } from 'node:fs';
import { respond } from '../../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga } from '../../../harness/cli';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import {
  createInProcessSagaEnv,
  demoInvocations,
  sagaStatus,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../../harness/saga-env';

const PLAN = {
  name: 'fixes',
  problem: 'A greeting file.',
  scope: { in: ['greeting.txt'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'a greeting exists', check: 'test -s greeting.txt' }],
  milestones: [
    {
      id: 1,
      slug: 'core',
      title: 'Greeting',
      depends_on: [],
      goal: 'greeting.txt.',
      validation: [],
      tasks: [planTask(1, 'greet', ['greeting.txt'], 'test -s greeting.txt')],
    },
  ],
};

const SCRIPT = {
  tasks: {
    '1.1': { attempts: [{ files: { 'greeting.txt': 'Hello\n' } }] },
    // The French fix: a first attempt that changes nothing (its check fails), then the fix.
    '2.1': { attempts: [{}, { files: { 'greeting.txt': 'Bonjour\n' } }] },
    // 2.2 is not in the script: the demo agent exits 0 without changes every time.
  },
};

const FRENCH = 'The greeting must be in French';

describe('acceptance fixes', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('acceptance-fixes');
  });
  afterAll(async () => env.close());

  test('an issue check runs in its fix task; an issue without one is asked for; a no-op fix is blocked', async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('fixes'), { plan: PLAN, script: SCRIPT });
    const { name } = await startApprovedSaga(env, { repo, planFile, name: 'acc-fixes', args: 'Greeting' });
    const atAcceptance = await waitForPending(env, name, 'acceptance-1', 120_000);
    expect(atAcceptance.pending[0]!.prompt).toContain(
      "' :: check: ' (e.g. 'The greeting must be in French :: check: grep -q Bonjour greeting.txt')",
    );

    // Bad report text is refused, naming what is wrong, and changes nothing.
    const report = (text: string) =>
      respond(env.client, name, {
        interactionId: 'acceptance-1',
        choice: 'report issues',
        text,
        user: 'test',
      });
    await expect(report(' \n  \n')).rejects.toThrow(/needs a note/);
    await expect(report('-\n')).rejects.toThrow(/Issue line 1 \('-'\) has no issue text/);
    await expect(report(`${FRENCH} :: check: grep -q "Bonjour greeting.txt`)).rejects.toThrow(
      /Issue line 1 .*: the check `grep -q "Bonjour greeting.txt` has an unclosed double quote/,
    );
    await expect(report(`${FRENCH}\n:: check: true`)).rejects.toThrow(/Issue line 2 .* has no issue text/);
    expect((await sagaStatus(env, name)).pending.map((p) => p.id)).toEqual(['acceptance-1']);

    // Reported as a user does, through bin/saga: it says the check-less issue is asked about first.
    const reported = await runSaga(
      [
        'report',
        name,
        '--issue',
        `${FRENCH} :: check: grep -q Bonjour greeting.txt`,
        '--issue',
        'Polish the greeting',
      ],
      env.cliEnv,
    );
    expect(reported).toMatchObject({ code: 0 });
    expect(reported.stdout).toContain(
      `Reported 2 issue(s) (acceptance-1); 1 without a check: the saga asks for their checks first (saga status ${name}).`,
    );

    // The issue without a check is asked for one; the one with a check is not.
    const asked = await waitForPending(env, name, 'acceptance-1-issue-2-check', 30_000);
    expect(asked.pending.map((p) => p.id)).toEqual(['acceptance-1-issue-2-check']);
    const question = asked.pending[0]!;
    expect(question).toMatchObject({ kind: 'question', options: ['check', 'none'] });
    expect(question.prompt).toContain('Issue 2 has no check: "Polish the greeting"');
    const answerCheck = (choice: string, text?: string) =>
      respond(env.client, name, { interactionId: question.id, choice, text, user: 'test' });
    await expect(answerCheck('check')).rejects.toThrow(/needs a note/);
    await expect(answerCheck('check', 'grep -q x &&')).rejects.toThrow(/ends with an operator/);
    await answerCheck('none');

    // Task 2.1: its check ran (failed on the no-op first attempt), then passed on the fix and was integrated.
    // Task 2.2 (review only): its no-op passes the exit criteria, but made no changes: blocked, re-delegated
    // once, then escalated.
    const escalated = await waitForPending(env, name, 'esc-m2t2-d2', 180_000);
    const escalation = escalated.pending.find((p) => p.id === 'esc-m2t2-d2')!;
    expect(escalation.kind).toBe('escalation');
    expect(escalation.prompt).toContain(
      'Task 2.2 (Polish the greeting) is still blocked after re-delegation: made no changes',
    );
    const fixes = escalated.milestones[1]!;
    const noop = fixes.tasks.find((t) => t.id === '2.2')!;
    expect(noop).toMatchObject({ status: 'blocked', delegations: 2, changedFiles: [] });
    expect(noop.reason).toMatch(/^made no changes/);
    expect(escalated.log.join('\n')).toMatch(/Task 2\.2 blocked \(made no changes/);

    const french = await waitForStatus(env, name, (s) => s.milestones[1]!.tasks[0]!.status === 'passed');
    const fix = french.milestones[1]!.tasks[0]!;
    expect(fix).toMatchObject({ id: '2.1', attempts: 2, changedFiles: ['greeting.txt'] });
    const checkOutput = fix.evidence.map((file) => readFileSync(file, 'utf8')).join('\n');
    expect(checkOutput).toContain('$ grep -q Bonjour greeting.txt');
    const runs = demoInvocations(env.demoLog).filter((i) => i.role === 'implementer');
    expect(runs.filter((i) => i.taskId === '2.1')).toHaveLength(2);
    expect(runs.filter((i) => i.taskId === '2.2').length).toBeGreaterThanOrEqual(2);

    // Skipping the no-op fix lets the milestone integrate without it; the user decides again.
    await respond(env.client, name, { interactionId: 'esc-m2t2-d2', choice: 'skip', user: 'test' });
    const round2 = await waitForPending(env, name, 'acceptance-2', 120_000);
    expect(round2.milestones[1]!.tasks.map((t) => [t.id, t.status])).toEqual([
      ['2.1', 'integrated'],
      ['2.2', 'skipped'],
    ]);
    // Passing exit criteria do not make the saga look done while a fix never landed.
    const acceptance2 = round2.pending.find((p) => p.id === 'acceptance-2')!;
    expect(acceptance2.prompt).toMatch(/Not integrated: 2\.2 \S+ skipped \(made no changes/);
    expect(acceptance2.options[acceptance2.recommended!]).toBe('report issues');
    await respond(env.client, name, { interactionId: 'acceptance-2', choice: 'accept', user: 'test' });
    const done = await env.client.workflow.getHandle(sagaWorkflowId(name)).result();
    expect(done.phase).toBe('complete');
  }, 400_000);
});
