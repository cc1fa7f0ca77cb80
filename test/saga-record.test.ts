/**
 * The Saga seed's record of a saga, end to end: REPORT.md summarises each exit criterion's evidence and gives
 * steps that can be followed as written; PROGRESS.md keeps every worker's ids after its task ended and its log
 * in time order.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../src/client/saga-client';
import type { SagaInput } from '../src/domain/saga-input';
import type { SagaStatus } from '../src/domain/state';
import { startOneTaskSaga } from './harness/one-task-plan';
import { createInProcessSagaEnv, waitForPending, type InProcessSagaEnv } from './harness/saga-env';

jest.setTimeout(240_000);

const NAME = 'record-check';

describe('the saga record', () => {
  let env: InProcessSagaEnv;
  let input: SagaInput;
  let atAcceptance: SagaStatus;
  const read = (file: string) => readFileSync(path.join(input.sagaDir, file), 'utf8');

  beforeAll(async () => {
    env = await createInProcessSagaEnv('record');
    input = await startOneTaskSaga(env.client, env.tmp('repo'), NAME, 'Add a greeting');
    await waitForPending(env, NAME, 'confirm-name');
    await respond(env.client, NAME, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
    await waitForPending(env, NAME, 'plan-approval-1', 60_000);
    await respond(env.client, NAME, { interactionId: 'plan-approval-1', choice: 'approve', user: 'test' });
    atAcceptance = await waitForPending(env, NAME, 'acceptance-1', 120_000);
  });
  afterAll(async () => {
    await respond(env.client, NAME, { interactionId: 'acceptance-1', choice: 'accept', user: 'test' }).catch(
      () => undefined,
    );
    await env.close();
  });

  test('REPORT.md shows each criterion check, its evidence with an excerpt of the output, and exact steps', () => {
    const report = read('REPORT.md');
    const evidence = readFileSync(
      path.join(input.sagaDir, 'runs', 'validation-r1', 'check-1.log'),
      'utf8',
    ).trim();
    const [header, ...output] = evidence.split('\n');
    const check = header!.replace(/^\$ /, '');
    expect(report).toMatch(new RegExp(`### E1: .* — passed`));
    expect(report).toContain(
      `- **Check:** \`${check}\`, run in a fresh checkout of \`${atAcceptance.integrationBranch}\``,
    );
    expect(report).toContain('Output (its end):');
    // The output's last line is quoted, and summarises the criterion in the table.
    const last = output
      .filter((l) => l.trim())
      .pop()!
      .trim();
    expect(report).toContain(last);
    expect(report).toContain(`last output: ${last}`);
    // Steps that work as written: a separate checkout, the check in it, and its removal.
    const verify = path.join(input.worktreeRoot, `saga-${NAME}-verify`);
    expect(report).toContain(
      `worktree add ${verify} ${atAcceptance.integrationBranch}\`, then \`cd ${verify}\``,
    );
    expect(report).toMatch(
      new RegExp(
        `E1 — .*: run \`${check.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\` and expect exit code 0\\. The saga's run: passed, last output: `,
      ),
    );
    expect(report).toContain(`worktree remove ${verify}\``);
  });

  test("PROGRESS.md keeps each worker's ids after its task ended, and its log in time order", () => {
    const task = atAcceptance.milestones[0]!.tasks[0]!;
    expect(task.status).toBe('integrated');
    const progress = read('PROGRESS.md');
    const line = progress.split('\n').find((l) => l.startsWith('- [x] 1.1 '))!;
    expect(line).toContain(`branch \`${task.branch}\``);
    expect(line).toContain(`workflow \`${task.workflowId}\` run \`${task.runId}\``);
    expect(line).toContain('agent `demo` session none reported');
    expect(line).toContain(
      `worktree \`${path.join(input.worktreeRoot, `saga-${NAME}-m1t1`)}\` (removed after its handoff)`,
    );
    const log = progress.split('## Log (newest first)\n\n')[1]!.trim().split('\n');
    const stamps = log.map((l) => l.slice(2, 26));
    expect(stamps).toEqual([...stamps].sort().reverse());
  });
});
