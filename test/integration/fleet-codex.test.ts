/**
 * A fleet with the codex preset: the real Codex CLI (tools/agent-clis) against its model stand-in, with
 * `--parallel=3` and no `--subagents`, runs three tasks at once. Each run's shell tool runs a command that
 * stamps its own start and end times into a file of its worktree (it lands on the task's branch).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { respond } from '../../src/client/saga-client';
import {
  createFleetRepo,
  git,
  planTask,
  startApprovedSaga,
  waitsForUserOrEnded,
} from '../harness/fleet-saga';
import { AGENT_CLI_BIN } from '../harness/server';
import { createSagaTestEnv, waitForStatus, type SagaTestEnv } from '../harness/saga-env';
import { codexEndpoint, startOpenAIResponsesStandIn } from '../standins/openai-responses';

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

const TASKS = [1, 2, 3];
const stampFile = (id: number) => `stamps/1-${id}.json`;
const ALL_STAMPS = TASKS.map((id) => `test -f ${stampFile(id)}`).join(' && ');

/** Run by the agent's own shell tool: its start, a pause, its end, in a file named for its task. */
const STAMP_COMMAND =
  `node -e 'const fs = require("fs"); const start = Date.now(); ` +
  `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000); ` +
  `fs.mkdirSync("stamps", { recursive: true }); const task = process.env.SAGA_TASK_ID; ` +
  `fs.writeFileSync("stamps/" + task.replace(/\\W/g, "-") + ".json", ` +
  `JSON.stringify({ task, start, end: Date.now() }))'`;

const plan = (name: string) => ({
  name,
  problem: 'Three independent stamps.',
  scope: { in: ['stamps/'], out: [], delegated: [] },
  exit_criteria: [{ id: 'E1', text: 'every stamp is there', check: ALL_STAMPS }],
  milestones: [
    {
      id: 1,
      slug: 'stamps',
      title: 'Stamps',
      depends_on: [],
      goal: 'One stamp per task.',
      validation: [{ text: 'every stamp is there', check: ALL_STAMPS }],
      tasks: TASKS.map((id) => ({
        ...planTask(id, `stamp-${id}`, [stampFile(id)], `test -f ${stampFile(id)}`),
        scope: 'Run the stamp command.',
      })),
    },
  ],
});

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
      // Its provider is named only in its own config.toml: allowed here by hand.
      network: [`127.0.0.1:${new URL(standIn.url).port}`],
    };
    const { repo, planFile } = createFleetRepo(dir, {
      plan: plan(name),
      script: {},
      config: YAML.stringify({ agents: { codex } }),
    });
    await startApprovedSaga(env, { repo, planFile, name, args: '--parallel=3 Three stamps', agent: 'codex' });
    const status = await waitForStatus(env, name, waitsForUserOrEnded, 360_000);
    expect(status.milestones[0]!.tasks.map((t) => [t.id, t.status, t.reason])).toEqual(
      TASKS.map((id) => [`1.${id}`, 'integrated', null]),
    );
    const stamps = TASKS.map(
      (id) =>
        JSON.parse(git(repo, 'show', `${status.integrationBranch}:${stampFile(id)}`)) as {
          task: string;
          start: number;
          end: number;
        },
    );
    expect(stamps.map((s) => s.task).sort()).toEqual(['1.1', '1.2', '1.3']);
    const peak = Math.max(
      ...stamps.map((s) => stamps.filter((o) => o.start <= s.start && s.start < o.end).length),
    );
    expect(peak).toBe(3);
    expect(status.executionMode).toBe('inline; parallel (3 lanes)');
    const acceptance = status.pending.find((p) => p.kind === 'acceptance')!;
    await respond(env.client, name, { interactionId: acceptance.id, choice: 'accept', user: 'test' });
    await waitForStatus(env, name, (s) => s.phase === 'complete', 60_000);
  } finally {
    await standIn.close();
  }
});
