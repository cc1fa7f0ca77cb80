/**
 * The record of a saga (docs/PROCEDURE.md §5.3, §11), end to end: REPORT.md summarises each exit
 * criterion's evidence and gives steps that can be followed as written; PROGRESS.md keeps every worker's ids
 * after its task ended and its log in time order; `saga continue` reconciles the record with git and the
 * evidence and the saga keeps what it found, so PROGRESS.md and `saga status` show it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { checkResultLine } from '../../../../src/domain/record/check-summary';
import type { SagaInput } from '../../../../src/domain/saga/saga-input';
import type { SagaStatus } from '../../../../src/domain/contract/state';
import { reconcileUpdate } from '../../../../src/domain/saga/messages';
import { runSaga } from '../../../harness/cli';
import { startOneTaskSaga } from '../../../harness/one-task-plan';
import {
  createInProcessSagaEnv,
  waitForPending,
  waitForStatus,
  type InProcessSagaEnv,
} from '../../../harness/saga-env';

jest.setTimeout(240_000);

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const NAME = 'record-check';

describe('the saga record: REPORT.md, PROGRESS.md, saga continue', () => {
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
    // The output's last line is quoted; its result line (not a timing) summarises the criterion in the table.
    const last = output
      .filter((l) => l.trim())
      .pop()!
      .trim();
    expect(report).toContain(last);
    const resultLine = checkResultLine(output.join('\n'));
    expect(resultLine).toMatch(/^# pass \d+, # fail 0$/);
    expect(report).toContain(`| ${resultLine} |`);
    // Steps that work as written: a separate checkout, the check in it, and its removal.
    const verify = path.join(input.worktreeRoot, `saga-${NAME}-verify`);
    expect(report).toContain(
      `worktree add ${verify} ${atAcceptance.integrationBranch}\`, then \`cd ${verify}\``,
    );
    expect(report).toMatch(
      new RegExp(
        `E1 — .*: run \`${check.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\` and expect exit code 0\\. The saga's run: passed, # pass `,
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

  test('saga continue finds a missing merge and missing evidence, and PROGRESS.md and saga status show them', async () => {
    const task = atAcceptance.milestones[0]!.tasks[0]!;
    // Reality moves away from the record: the integration branch loses the task's merge, an evidence file goes.
    git(input.repo, 'update-ref', `refs/heads/${atAcceptance.integrationBranch}`, 'main');
    const lost = task.evidence[0]!;
    rmSync(lost);

    const cont = await runSaga(['continue', NAME, '--detach'], env.cliEnv);
    expect(cont.stderr).toBe('');
    expect(cont.code).toBe(0);
    const merge = `recorded as integrated but not merged into '${atAcceptance.integrationBranch}'`;
    expect(cont.stdout).toContain(merge);

    const status = await waitForStatus(env, NAME, (s) => !!s.reconciliation);
    expect(status.reconciliation!.findings).toEqual(
      expect.arrayContaining([
        { task: '1.1', text: merge },
        { task: '1.1', text: `evidence '${lost}' is missing` },
      ]),
    );
    const progress = read('PROGRESS.md');
    expect(progress).toContain('## Reconciliation');
    expect(progress).toContain(`- Task 1.1: ${merge}`);
    expect(progress).toContain(`- Task 1.1: evidence '${lost}' is missing`);
    expect(progress.split('\n').find((l) => l.startsWith('- [x] 1.1 '))).toContain(
      `reconciliation: ${merge}`,
    );
    expect(progress).toContain(`Reconciliation: task 1.1: ${merge}`); // in the log

    const shown = await runSaga(['status', NAME], env.cliEnv);
    expect(shown.stdout).toContain('Reconciliation: saga continue at ');
    expect(shown.stdout).toContain(`  - Task 1.1: ${merge}`);
    // Bad input is refused, naming what is wrong, and changes nothing.
    const handle = env.client.workflow.getHandle(sagaWorkflowId(NAME));
    const refused = await handle
      .executeUpdate(reconcileUpdate, {
        args: [{ findings: [{ task: '1.1', text: '' }], checked: { tasks: 1, evidenceFiles: 0 } }],
      })
      .catch((error: Error) => error);
    expect((refused as Error & { cause?: Error }).cause?.message).toMatch(
      /reconcile: invalid input: findings\.0\.text/,
    );
    expect((await waitForStatus(env, NAME, () => true)).reconciliation).toEqual(status.reconciliation);
    const json = JSON.parse((await runSaga(['status', NAME, '--json'], env.cliEnv)).stdout) as SagaStatus;
    expect(json.reconciliation!.findings).toContainEqual({ task: '1.1', text: merge });
  });
});
