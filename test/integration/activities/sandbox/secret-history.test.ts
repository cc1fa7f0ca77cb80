/**
 * An agent profile's secrets never enter workflow history. A real saga runs with a profile
 * whose `env` holds a `${MY_API_KEY}` reference (the value lives only in the worker's environment) and a
 * secret-looking literal in saga.config.yaml; the agent gets both values, and the raw histories of every
 * workflow of the saga (saga, phases, task) contain neither.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { createFleetRepo, planTask, sagaRuns, startApprovedSaga } from '../../../harness/fleet-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

/** Every string and every byte payload of a history, decoded as text (payloads are JSON in bytes). */
function historyText(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) historyText(item, out);
  else if (value && typeof value === 'object')
    for (const item of Object.values(value)) historyText(item, out);
  return out;
}

let env: SagaTestEnv;
const referenced = `sk-referenced-${randomUUID()}`;
const literal = `literal-token-${randomUUID()}`;

beforeAll(async () => {
  process.env.MY_API_KEY = referenced;
  env = await createSagaTestEnv('secret-history');
  await env.startWorkers();
});
afterAll(async () => {
  delete process.env.MY_API_KEY;
  await env?.close();
});

test('profile env secrets reach the agent but appear in no workflow history', async () => {
  const dir = env.tmp('secrets');
  const seen = path.join(dir, 'agent-env.jsonl');
  const wrapper = path.join(dir, 'agent.js');
  writeFileSync(
    wrapper,
    // Confined, it writes only its worktree and the log its preset names (SAGA_DEMO_LOG, shared with demo).
    `const e = process.env;\nrequire('fs').appendFileSync(e.SAGA_DEMO_LOG, JSON.stringify({ role: e.SAGA_ROLE, task: e.SAGA_TASK_ID, key: e.MY_API_KEY, token: e.OTHER_TOKEN }) + '\\n');\n` +
      `require(${JSON.stringify(path.join(PROJECT_ROOT, 'agents', 'demo-agent.js'))});\n`,
  );
  const check = "node -e \"require('fs').accessSync('alpha.txt')\"";
  const { repo, planFile } = createFleetRepo(dir, {
    plan: {
      name: 'secrets',
      problem: 'One file written by an agent whose profile holds secrets.',
      scope: { in: ['alpha.txt'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'alpha.txt exists', check }],
      milestones: [
        {
          id: 1,
          slug: 'alpha',
          title: 'Alpha',
          depends_on: [],
          goal: 'alpha.txt.',
          validation: [{ text: 'alpha.txt exists', check }],
          tasks: [planTask(1, 'alpha', ['alpha.txt'], check)],
        },
      ],
    },
    script: { tasks: { '1.1': { attempts: [{ files: { 'alpha.txt': 'alpha\n' } }] } } },
    config:
      'agents:\n  demo:\n' +
      `    command: ["{node}", ${JSON.stringify(wrapper)}]\n` +
      `    env: { MY_API_KEY: "\${MY_API_KEY}", OTHER_TOKEN: ${JSON.stringify(literal)}, SAGA_DEMO_LOG: ${JSON.stringify(seen)} }\n`,
  });
  const input = await startApprovedSaga(env, { repo, planFile, name: 'secrets', args: 'Write alpha' });
  const status = await waitForPending(env, input.name, 'acceptance-1', 120_000);
  expect(status.milestones[0]!.tasks[0]).toMatchObject({ id: '1.1', status: 'integrated' });

  // The agent got both values.
  const runs = readFileSync(seen, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { role: string; task: string; key?: string; token?: string });
  expect(runs).toContainEqual({ role: 'implementer', task: '1.1', key: referenced, token: literal });

  // No history holds either; the reference itself is there (the decoding does see the profiles).
  const workflows = await sagaRuns(env, input.name);
  expect(workflows.map((w) => w.workflowId)).toEqual(
    expect.arrayContaining([`saga-${input.name}-m1t1`, `saga-${input.name}`]),
  );
  let all = '';
  for (const run of workflows) {
    const history = await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    const text = `${JSON.stringify(history)}\n${historyText(history).join('\n')}`;
    expect(text).not.toContain(referenced);
    expect(text).not.toContain(literal);
    all += text;
  }
  expect(all).toContain('${MY_API_KEY}');
}, 180_000);
