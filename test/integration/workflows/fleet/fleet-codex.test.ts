/**
 * A fleet with the codex preset: the real Codex CLI (tools/agent-clis) against its model stand-in, with
 * `--parallel=3` and no `--subagents`, runs three tasks at once. Each run's shell tool runs a command that
 * stamps its own start and end times into a file of its worktree (it lands on the task's branch).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { respond } from '../../../../src/client/saga-client';
import { createFleetRepo, startApprovedSaga, waitsForUserOrEnded } from '../../../harness/fleet-saga';
import { peakConcurrency, readStamps, STAMP_TASKS, stampsPlan } from '../../../harness/stamps';
import { AGENT_CLI_BIN } from '../../../harness/server';
import { createSagaTestEnv, waitForStatus, type SagaTestEnv } from '../../../harness/saga-env';
import { codexEndpoint, startOpenAIResponsesStandIn } from '../../../standins/openai-responses';

let env: SagaTestEnv;
const savedPath = process.env.PATH;

beforeAll(async () => {
  process.env.PATH = `${AGENT_CLI_BIN}${path.delimiter}${savedPath ?? ''}`;
  env = await createSagaTestEnv('fleet-codex');
  await env.startWorkers();
});
afterAll(async () => {
  await env?.close();
  process.env.PATH = savedPath;
});

jest.setTimeout(400_000);

/** Run by the agent's own shell tool: its start, a pause, its end, in a file named for its task. */
const STAMP_COMMAND =
  `node -e 'const fs = require("fs"); const start = Date.now(); ` +
  `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000); ` +
  `fs.mkdirSync("stamps", { recursive: true }); const task = process.env.SAGA_TASK_ID; ` +
  `fs.writeFileSync("stamps/" + task.replace(/\\W/g, "-") + ".json", ` +
  `JSON.stringify({ task, start, end: Date.now() }))'`;

test('the codex preset with --parallel=3 runs three tasks at once', async () => {
  const standIn = await startOpenAIResponsesStandIn({
    steps: [{ kind: 'shell', command: STAMP_COMMAND }],
    finalText: 'Stamped.',
  });
  try {
    const name = 'codex-lanes';
    const dir = env.tmp(name);
    const home = path.join(dir, 'agent-home');
    mkdirSync(home, { recursive: true });
    const codex = {
      model: 'gpt-5.5',
      timeout: '3m',
      idle_timeout: '2m',
      env: await codexEndpoint(standIn, home),
      // Its provider is named only in its own config.toml, which saga reads: no `network:` line.
    };
    const { repo, planFile } = createFleetRepo(dir, {
      plan: stampsPlan(name, 'Run the stamp command.'),
      script: {},
      config: YAML.stringify({ agents: { codex } }),
    });
    await startApprovedSaga(env, { repo, planFile, name, args: '--parallel=3 Three stamps', agent: 'codex' });
    const status = await waitForStatus(env, name, waitsForUserOrEnded, 360_000);
    expect(status.milestones[0]!.tasks.map((t) => [t.id, t.status, t.reason])).toEqual(
      STAMP_TASKS.map((id) => [`1.${id}`, 'integrated', null]),
    );
    const stamps = readStamps(repo, status.integrationBranch);
    expect(stamps.map((s) => s.task).sort()).toEqual(['1.1', '1.2', '1.3']);
    expect(peakConcurrency(stamps)).toBe(3);
    expect(status.executionMode).toBe('inline; parallel (3 lanes)');
    const acceptance = status.pending.find((p) => p.kind === 'acceptance')!;
    await respond(env.client, name, { interactionId: acceptance.id, choice: 'accept', user: 'test' });
    await waitForStatus(env, name, (s) => s.phase === 'complete', 60_000);
  } finally {
    await standIn.close();
  }
});
