/**
 * A profile of the user's own (`command:` without `output:`) whose CLI prints Claude
 * Code's JSON envelope (a wrapper around `claude -p --output-format json`) is read as Claude's output: a
 * quality-locked reviewer's findings inside the envelope's `result` count, instead of reading as zero and
 * passing the plan unreviewed, and the envelope's session is kept.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { prepareSaga, startSaga } from '../../../../src/client/commands/start';
import { respond } from '../../../../src/client/saga-client';
import { createSampleRepo } from '../../../../src/demo/sample-repo';
import { parseManifest } from '../../../../src/domain/record/manifest';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { DEMO_AGENT, oneTaskPlan } from '../../../harness/modes-helpers';

/**
 * Reviewer runs print one envelope (the first with a critical finding, later ones clean) and write no report
 * file; every other role is the demo agent.
 */
function envelopeAgent(dir: string): string {
  const script = path.join(dir, 'claude-wrapper.js');
  const counter = path.join(dir, 'reviews.txt');
  writeFileSync(counter, '');
  writeFileSync(
    script,
    `'use strict';
const fs = require('node:fs');
if (process.env.SAGA_ROLE !== 'reviewer') return void require(${JSON.stringify(DEMO_AGENT)});
fs.appendFileSync(${JSON.stringify(counter)}, 'x');
const first = fs.readFileSync(${JSON.stringify(counter)}, 'utf8').length === 1;
const findings = first
  ? 'CRITICAL:\\n- the plan never says how a missing name is greeted\\nMAJOR: None\\nMINOR-substantive: None\\n'
  : 'CRITICAL: None\\nMAJOR: None\\nMINOR-substantive: None\\n';
process.stdout.write(JSON.stringify({
  type: 'result', subtype: 'success', is_error: false, num_turns: 2, result: findings,
  session_id: 'envelope-session-' + fs.readFileSync(${JSON.stringify(counter)}, 'utf8').length,
  total_cost_usd: 0.25, usage: { input_tokens: 1200, output_tokens: 80 },
}) + '\\n');
`,
  );
  return script;
}

describe('a custom-command profile that prints a Claude JSON envelope', () => {
  let env: SagaTestEnv;
  beforeAll(async () => {
    env = await createSagaTestEnv('claude-envelope');
    process.env.SAGA_HOME = env.sagaHome;
    process.env.SAGA_HOST_ID = env.hostId;
    process.env.SAGA_TASK_QUEUE = env.taskQueue;
    await env.startWorkers();
  });
  afterAll(async () => env.close());

  test("the reviewer's findings in the envelope count: the plan is revised, not passed", async () => {
    const dir = env.tmp('envelope');
    const wrapper = envelopeAgent(dir);
    const planFile = path.join(dir, 'plan.json');
    writeFileSync(planFile, JSON.stringify(oneTaskPlan()));
    const repo = createSampleRepo(path.join(dir, 'repo'), {
      // The wrapper counts its runs in a file outside its worktree: unconfined, as in the modes tests.
      configExtra: `sandbox: none\nagents:\n  wrapped:\n    command: ${JSON.stringify(['{node}', wrapper])}\n`,
    });
    const input = await prepareSaga({
      repo,
      trustRepoConfig: true,
      argumentsText: '--quality-locked Add a greeting',
      name: 'envelope-review',
      agent: 'wrapped',
      plan: planFile,
    });
    await startSaga(env.client, input);
    const answer = (id: string, choice: string) =>
      respond(env.client, input.name, { interactionId: id, choice, user: 'tester' });
    await waitForPending(env, input.name, 'confirm-name');
    await answer('confirm-name', 'confirm');
    await waitForPending(env, input.name, 'plan-approval-review');
    await answer('plan-approval-review', '[A] Review');
    await waitForPending(env, input.name, 'plan-approval-1', 60_000);

    const manifest = parseManifest(readFileSync(path.join(input.sagaDir, 'manifest.md'), 'utf8')).front;
    expect(manifest.quality_locked_history.map((h) => [h.iteration, h.result, h.counts.critical])).toEqual([
      [1, 'REVISE', 1],
      [2, 'PASS', 0],
    ]);
    // The findings kept for the author are the envelope's text, not its JSON.
    const findings = readFileSync(manifest.quality_locked_history[0]!.findings!, 'utf8');
    expect(findings).toContain('- the plan never says how a missing name is greeted');
    expect(findings).not.toContain('"session_id"');
    // Each run's session is recorded beside its transcript, which `saga logs` reads as Claude's.
    expect(readFileSync(path.join(dir, 'reviews.txt'), 'utf8')).toBe('xx');
    const runs = path.join(input.sagaDir, 'runs');
    const recorded = readdirSync(runs)
      .map((label) => path.join(runs, label, 'agent.json'))
      .filter((file) => existsSync(file))
      .map((file) => JSON.parse(readFileSync(file, 'utf8')) as { sessionId: string; output: string })
      .filter((run) => run.sessionId?.startsWith('envelope-session-'));
    expect(recorded.map((run) => [run.sessionId, run.output]).sort()).toEqual([
      ['envelope-session-1', 'claude'],
      ['envelope-session-2', 'claude'],
    ]);
    await answer('plan-approval-1', 'reject');
    await waitForStatus(env, input.name, (s) => s.phase === 'cancelled');
  }, 120_000);
});
