/**
 * The auto-pick notice (--autonomous --quality-locked pick [A] Review at a normal approval checkpoint),
 * through bin/saga against the real server: `saga start --wait` prints it as docs/PROCEDURE.md §9.9 has it
 * (Reason / Logged to / Override) in place of the checkpoint's prompt, `saga status` shows it, and
 * PROGRESS.md's log keeps it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../../src/domain/contract/naming';
import { runSaga, SAGA_BIN } from '../../../harness/cli';
import { createInProcessSagaEnv, waitForPending, type InProcessSagaEnv } from '../../../harness/saga-env';
import { waitFor } from '../../../harness/wait';

jest.setTimeout(180_000);

describe('the auto-pick notice', () => {
  let env: InProcessSagaEnv;
  beforeAll(async () => {
    env = await createInProcessSagaEnv('auto-pick-notice');
  });
  afterAll(async () => env.close());

  test('saga start --wait prints it, saga status and PROGRESS.md show it', async () => {
    const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
    const name = `auto-pick-${Date.now().toString(36)}`;
    const sagaDir = path.join(env.sagaHome, name);
    const args = ['start', '--repo', repo, '--plan', GREETING_PLAN_FILE, '--name', name, '--wait'];
    const child = spawn(
      process.execPath,
      [SAGA_BIN, ...args, '--', '--autonomous --quality-locked Add a greeting'],
      { env: env.cliEnv, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      await waitForPending(env, name, 'confirm-name', 60_000);
      await respond(env.client, name, { interactionId: 'confirm-name', choice: 'confirm', user: 'test' });
      await waitForPending(env, name, 'plan-approval-1', 90_000);
      const notice = [
        'Saga: Auto-proceeding with [A] Review at the plan-approval checkpoint.',
        '  Reason: --autonomous --quality-locked both active. [A] is the only option consistent with both flags.',
        `  Logged to: ${sagaDir}/manifest.md (auto_picked_checkpoints) and decisions.md`,
        `  Override: interrupt this saga (saga cancel ${name}) and re-run without one of the flags (omit --quality-locked to disable the flag; omit --autonomous to disable the flag).`,
      ].join('\n');
      await waitFor('the plan approval in the output', () => stdout.includes('[plan-approval-1]'), 30_000);
      expect(stdout).toContain(notice);
      // In place of the prompt: before the plan approval the user answers, never as a review question.
      expect(stdout.indexOf(notice)).toBeLessThan(stdout.indexOf('[plan-approval-1]'));

      const status = await runSaga(['status', name], env.cliEnv);
      expect(status.stdout).toContain(notice);

      const progress = () => {
        try {
          return readFileSync(path.join(sagaDir, 'PROGRESS.md'), 'utf8');
        } catch {
          return '';
        }
      };
      await waitFor('the notice in PROGRESS.md', () => progress().includes('Auto-proceeding'), 30_000);
      expect(progress()).toContain(
        'Saga: Auto-proceeding with [A] Review at the plan-approval checkpoint. Reason: --autonomous --quality-locked both active.',
      );
    } finally {
      child.kill();
      await env.client.workflow
        .getHandle(sagaWorkflowId(name))
        .terminate('test over')
        .catch(() => undefined);
    }
  });
});
