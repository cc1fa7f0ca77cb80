/**
 * An implementer's blocked report (templates/implementer.md, seed 003 P2.4), against the real server with
 * the demo agent: `{"status":"blocked","reason":"SPEC GAP: ..."}` with work that fails the task's check
 * ends the task after one paid run, blocked with the agent's reason, and goes straight to the user with the
 * spec gap in the question; the same report with work that passes the check is a pass (the checks decide).
 */
import { respond } from '../src/client/saga-client';
import { sagaWorkflowId } from '../src/domain/naming';
import { createFleetRepo, planTask, startApprovedSaga } from './harness/fleet-saga';
import {
  createInProcessSagaEnv,
  demoInvocations,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from './harness/saga-env';

const returns = (file: string, value: string) =>
  `node -e "require('assert').strictEqual(require('./src/${file}.js')(), '${value}')"`;
const mod = (value: string) => `module.exports = () => '${value}';\n`;

const PLAN = {
  name: 'blocked',
  problem: 'Two modules, one of whose specs leaves a question open.',
  scope: { in: ['src/*.js'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'both modules load', check: returns('beta', 'beta') }],
  milestones: [
    {
      id: 1,
      slug: 'core',
      title: 'Core modules',
      depends_on: [],
      goal: 'alpha and beta.',
      validation: [{ text: 'beta loads', check: returns('beta', 'beta') }],
      tasks: [
        planTask(1, 'alpha', ['src/alpha.js'], returns('alpha', 'alpha')),
        planTask(2, 'beta', ['src/beta.js'], returns('beta', 'beta')),
      ],
    },
  ],
};

const GAP =
  'SPEC GAP: the spec does not say which language alpha greets in.\nAsk the user: English or French?';

const SCRIPT = {
  tasks: {
    // Blocked, and its work fails the check.
    '1.1': {
      attempts: [
        { files: { 'src/alpha.js': mod('unsure') }, exit: 0, report: { status: 'blocked', reason: GAP } },
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
  },
};

describe('blocked reports', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('blocked-report');
  });
  afterAll(async () => env.close());

  test('a blocked report with failing checks ends the task after one run and escalates the spec gap', async () => {
    const { repo, planFile } = createFleetRepo(env.tmp('gap'), { plan: PLAN, script: SCRIPT });
    const input = await startApprovedSaga(env, { repo, planFile, name: 'blocked-gap', args: 'Two modules' });

    const asked = await waitForPending(env, input.name, 'esc-m1t1-d1', 60_000);
    const escalation = asked.pending.find((p) => p.id === 'esc-m1t1-d1')!;
    expect(escalation.kind).toBe('escalation');
    expect(escalation.prompt).toContain(
      'Task 1.1 (Task alpha) is blocked: its agent found a spec gap: the spec does not say which language alpha greets in. Ask the user: English or French?',
    );
    expect(escalation.options).toEqual(['retry', 'skip', 'edit', 'abort']);

    // Ended after its first attempt, with the agent's reason on one line.
    const done = await waitForStatus(env, input.name, (s) =>
      s.milestones[0]!.tasks.some((t) => t.id === '1.2' && t.status === 'passed'),
    );
    const [alpha, beta] = done.milestones[0]!.tasks;
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

    // One paid run each: no further attempt, no blind re-delegation.
    const implementerRuns = demoInvocations(env.demoLog).filter((i) => i.role === 'implementer');
    expect(implementerRuns.filter((i) => i.taskId === '1.1')).toHaveLength(1);
    expect(implementerRuns.filter((i) => i.taskId === '1.2')).toHaveLength(1);

    await respond(env.client, input.name, { interactionId: 'esc-m1t1-d1', choice: 'abort', user: 'test' });
    const final = await env.client.workflow.getHandle(sagaWorkflowId(input.name)).result();
    expect(final.phase).not.toBe('complete');
  });
});
