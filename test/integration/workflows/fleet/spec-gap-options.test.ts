/**
 * A spec gap reported with options (templates/implementer.md: `"options"`, `"recommended"`), against the real
 * server with the demo agent: the question offers the agent's options, labelled by the saga, capped and
 * stripped of control characters, the recommended one marked (also in `saga status`), next to the saga's own
 * answers; picking an option re-delegates the task with it as the clarification and records the deviation.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga } from '../../../harness/cli';
import { createFleetRepo, oneFilePlan, startApprovedSaga } from '../../../harness/fleet-saga';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../../harness/saga-env';

const CHECK = `node -e "require('assert').strictEqual(require('fs').readFileSync('work.txt', 'utf8'), 'bonjour')"`;

const SCRIPT = {
  tasks: {
    '1.1': {
      attempts: [
        {
          files: { 'work.txt': 'unsure' },
          report: {
            status: 'blocked',
            reason: 'SPEC GAP: which language does the app greet in?',
            // A duplicate, a control sequence, a non-string, one too many and one far too long.
            options: [
              'English',
              'French: "bonjour"',
              'english',
              '\u001b[31mGerman\u001b[0m\u0007',
              42,
              `Spanish ${'x'.repeat(300)}`,
              'Italian',
            ],
            recommended: 1,
          },
        },
        { files: { 'work.txt': 'bonjour' } },
      ],
    },
  },
};

describe('spec gap options', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('spec-gap-options');
  });
  afterAll(async () => env.close());

  test("the agent's options, the recommended one marked; a pick re-delegates with it", async () => {
    const plan = oneFilePlan('gapopts', CHECK);
    const { repo, planFile } = createFleetRepo(env.tmp('gap'), { plan, script: SCRIPT });
    const input = await startApprovedSaga(env, { repo, planFile, name: 'gap-options', args: 'Greet' });

    const asked = await waitForPending(env, input.name, 'gap-m1t1-d1', 60_000);
    const question = asked.pending.find((p) => p.id === 'gap-m1t1-d1')!;
    expect(question.options).toEqual([
      '[A] English',
      '[B] French: "bonjour"',
      '[C] German',
      `[D] Spanish ${'x'.repeat(120 - 'Spanish '.length - 1)}…`,
      'answer',
      'skip',
      'abort',
    ]);
    expect(question.recommended).toBe(1);
    expect(question.prompt).toContain(
      'found a spec gap: which language does the app greet in?. Its agent offers 4 option(s) ([A]–[D]; it recommends [B]): pick one',
    );

    // Where the user reads it: `saga status` marks the agent's recommendation.
    const status = await runSaga(['status', input.name], env.cliEnv);
    expect(status.stdout).toContain('2) [B] French: "bonjour"  (recommended)');
    expect(status.stdout).toContain('5) answer\n');

    // Picked by its key, no text needed; the re-delegated agent gets the option as the clarification.
    await respond(env.client, input.name, { interactionId: 'gap-m1t1-d1', choice: 'b', user: 'ada' });
    const fixed = await waitForStatus(env, input.name, (s) => s.milestones[0]!.tasks[0]!.status === 'passed');
    expect(fixed.milestones[0]!.tasks[0]).toMatchObject({ delegations: 2, attempts: 2 });
    const prompt = readFileSync(path.join(input.sagaDir, 'runs', 'm1t1-d2-a2', 'prompt.md'), 'utf8');
    expect(prompt).toContain('The user (ada) clarified: French: \\"bonjour\\".');
    const deviation =
      'Deviation: task 1.1 spec gap: which language does the app greet in? — answered by ada with option [B]: French: "bonjour"';
    expect(fixed.log.map((line) => line.slice(line.indexOf(' ') + 1))).toContain(deviation);

    await env.client.workflow
      .getHandle(sagaWorkflowId(input.name))
      .terminate('test over')
      .catch(() => undefined);
  }, 200_000);
});
