/**
 * An implementer's blocked report (templates/implementer.md, docs/PROCEDURE.md §3.9), against the real server with
 * the demo agent: `{"status":"blocked","reason":"SPEC GAP: ..."}` with work that fails the task's check
 * ends the task after one paid run, blocked with the agent's reason, and goes straight to the user as a
 * question naming the spec gap; the answer reaches the re-delegated agent's notes and is recorded as a
 * deviation (a "Deviation: " log line, a decisions.md entry). The same report with work that passes the check
 * is a pass (the checks decide); a blocked report that is no spec gap is escalated.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { createFleetRepo, planTask, startApprovedSaga } from '../../../harness/fleet-saga';
import {
  createInProcessSagaEnv,
  demoInvocations,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../../harness/saga-env';

const returns = (file: string, value: string) =>
  `node -e "require('assert').strictEqual(require('./src/${file}.js')(), '${value}')"`;
const mod = (value: string) => `module.exports = () => '${value}';\n`;

const PLAN = {
  name: 'blocked',
  problem: 'Two modules, one of whose specs leaves a question open.',
  scope: { in: ['src/*.js'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'beta loads', check: returns('beta', 'beta') }],
  milestones: [
    {
      id: 1,
      slug: 'core',
      title: 'Core modules',
      depends_on: [],
      goal: 'alpha and beta.',
      validation: [{ text: 'beta loads', check: returns('beta', 'beta') }],
      tasks: [
        planTask(1, 'alpha', ['src/alpha.js'], returns('alpha', 'bonjour')),
        planTask(2, 'beta', ['src/beta.js'], returns('beta', 'beta')),
        planTask(3, 'gamma', ['src/gamma.js'], returns('gamma', 'gamma')),
      ],
    },
  ],
};

const GAP =
  'SPEC GAP: the spec does not say which language alpha greets in.\nAsk the user: English or French?';

const SCRIPT = {
  tasks: {
    // Blocked, and its work fails the check; once the gap is answered (attempt 2), it passes.
    '1.1': {
      attempts: [
        { files: { 'src/alpha.js': mod('unsure') }, exit: 0, report: { status: 'blocked', reason: GAP } },
        { files: { 'src/alpha.js': mod('bonjour') } },
      ],
    },
    // Says blocked, but its work passes the check: the saga's own checks decide.
    '1.2': {
      attempts: [
        {
          files: { 'src/beta.js': mod('beta') },
          report: { status: 'blocked', reason: 'unsure about the style' },
        },
      ],
    },
    // Blocked for a reason that is no spec gap: the escalation, as before.
    '1.3': {
      attempts: [
        {
          files: { 'src/gamma.js': mod('unsure') },
          report: { status: 'blocked', reason: 'needs a database password' },
        },
      ],
    },
  },
};

describe('blocked reports', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('blocked-report');
  });
  afterAll(async () => env.close());

  test('a spec gap becomes a question; the answer re-delegates the task and is recorded as a deviation', async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('gap'), { plan: PLAN, script: SCRIPT });
    const input = await startApprovedSaga(env, { repo, planFile, name: 'blocked-gap', args: 'Two modules' });

    const asked = await waitForPending(env, input.name, 'gap-m1t1-d1', 60_000);
    const question = asked.pending.find((p) => p.id === 'gap-m1t1-d1')!;
    expect(question.kind).toBe('question');
    expect(question.prompt).toContain(
      'Task 1.1 (Task alpha) found a spec gap: the spec does not say which language alpha greets in. Ask the user: English or French?',
    );
    expect(question.options).toEqual(['answer', 'skip', 'abort']);

    // Ended after its first attempt, with the agent's reason on one line.
    const waiting = await waitForStatus(env, input.name, (s) =>
      s.milestones[0]!.tasks.every((t) => t.status === 'passed' || t.status === 'blocked'),
    );
    const [alpha, beta, gamma] = waiting.milestones[0]!.tasks;
    expect(alpha).toMatchObject({
      id: '1.1',
      status: 'blocked',
      attempts: 1,
      delegations: 1,
      reason:
        'agent reported blocked: SPEC GAP: the spec does not say which language alpha greets in. Ask the user: English or French?',
    });
    // The same report with work that passes the check is a pass.
    expect(beta).toMatchObject({ id: '1.2', status: 'passed', attempts: 1, reason: null });
    // A blocked report that is no spec gap goes to the escalation.
    expect(gamma).toMatchObject({ id: '1.3', status: 'blocked', attempts: 1 });
    const escalated = await waitForPending(env, input.name, 'esc-m1t3-d1', 30_000);
    expect(escalated.pending.find((p) => p.id === 'esc-m1t3-d1')!.prompt).toContain(
      'is blocked: its agent reported it is blocked: needs a database password',
    );

    // One paid run each so far: no further attempt, no blind re-delegation.
    const implementerRuns = () => demoInvocations(env.demoLog).filter((i) => i.role === 'implementer');
    expect(implementerRuns().filter((i) => i.taskId === '1.1')).toHaveLength(1);
    expect(implementerRuns().filter((i) => i.taskId === '1.2')).toHaveLength(1);

    // The clarification is required, then re-delegates the task with it in the agent's notes.
    await expect(
      respond(env.client, input.name, { interactionId: 'gap-m1t1-d1', choice: 'answer', user: 'test' }),
    ).rejects.toThrow(/needs a note/);
    await respond(env.client, input.name, {
      interactionId: 'gap-m1t1-d1',
      choice: 'answer',
      text: 'French: alpha returns "bonjour".',
      user: 'ada',
    });
    const fixed = await waitForStatus(env, input.name, (s) => s.milestones[0]!.tasks[0]!.status === 'passed');
    expect(fixed.milestones[0]!.tasks[0]).toMatchObject({ delegations: 2, attempts: 2 });
    const prompt = readFileSync(path.join(input.sagaDir, 'runs', 'm1t1-d2-a2', 'prompt.md'), 'utf8');
    expect(prompt).toContain(
      'You reported a spec gap: the spec does not say which language alpha greets in. Ask the user: English or French?. The user (ada) clarified: French: alpha returns \\"bonjour\\".',
    );

    // Recorded as a deviation: in the progress log (PROGRESS.md renders those lines) and in decisions.md.
    const deviation =
      'Deviation: task 1.1 spec gap: the spec does not say which language alpha greets in. Ask the user: English or French? — answered by ada: French: alpha returns "bonjour".';
    // Log lines are "<ISO time> <line>".
    expect(fixed.log.map((line) => line.slice(line.indexOf(' ') + 1))).toContain(deviation);
    await waitForStatus(env, input.name, () =>
      readFileSync(path.join(input.sagaDir, 'decisions.md'), 'utf8').includes(deviation),
    );

    await respond(env.client, input.name, { interactionId: 'esc-m1t3-d1', choice: 'abort', user: 'test' });
    const final = await env.client.workflow.getHandle(sagaWorkflowId(input.name)).result();
    expect(final.phase).not.toBe('complete');
  }, 200_000);
});
