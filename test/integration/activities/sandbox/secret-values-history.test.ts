/**
 * A secret is kept out of workflow history by what it looks like, not only by its variable's name: a real
 * saga runs with a profile whose `env` gives an API key under `MY_CONF` and a database URL with a password
 * under `DB_URL` (names that do not look secret) and a plain setting. The agent gets all three; no history
 * of the saga holds the two secrets, and the plain setting is there (the check sees profile values).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { looksLikeSecretValue } from '../../../../src/domain/config/agent-env';
import { PROJECT_ROOT } from '../../../../src/project-root';
import { createFleetRepo, planTask, sagaRuns, startApprovedSaga } from '../../../harness/fleet-saga';
import { createSagaTestEnv, waitForPending, type SagaTestEnv } from '../../../harness/saga-env';

function historyText(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) historyText(item, out);
  else if (value && typeof value === 'object')
    for (const item of Object.values(value)) historyText(item, out);
  return out;
}

const apiKey = `sk-proj-${randomUUID().replace(/-/g, '')}`;
const password = `pw${randomUUID().slice(0, 8)}`;
const dbUrl = `postgres://app:${password}@db.internal:5432/app`;
const plain = `plain-setting-${randomUUID().slice(0, 8)}`;

let env: SagaTestEnv;
beforeAll(async () => {
  env = await createSagaTestEnv('secret-values');
  await env.startWorkers();
});
afterAll(async () => env?.close());

describe('looksLikeSecretValue', () => {
  test.each([
    ['sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345', true],
    ['xoxb-123456789012-abcdefghijkl', true],
    ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', true],
    ['AKIAIOSFODNN7EXAMPLE', true],
    ['https://user:hunter2@example.com/x', true],
    ['-----BEGIN OPENSSH PRIVATE KEY-----', true],
    ['Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdI', true],
    ['claude-sonnet-4-5-20250929', false],
    ['/home/user/projects/SomeProject2024/node_modules/.bin', false],
    ['https://api.example.com/v1/chat', false],
    ['node --test --experimental-test-coverage', false],
    ['production', false],
  ])('%s → %s', (value, secret) => {
    expect(looksLikeSecretValue(value)).toBe(secret);
  });
});

test('secret-looking values under plain names reach the agent but appear in no workflow history', async () => {
  const dir = env.tmp('values');
  const seen = path.join(dir, 'agent-env.jsonl');
  const wrapper = path.join(dir, 'agent.js');
  writeFileSync(
    wrapper,
    `const e = process.env;\nrequire('fs').appendFileSync(e.SAGA_DEMO_LOG, JSON.stringify({ role: e.SAGA_ROLE, conf: e.MY_CONF, db: e.DB_URL, plain: e.PLAIN }) + '\\n');\n` +
      `require(${JSON.stringify(path.join(PROJECT_ROOT, 'agents', 'demo-agent.js'))});\n`,
  );
  const check = "node -e \"require('fs').accessSync('alpha.txt')\"";
  const { repo, planFile } = createFleetRepo(dir, {
    plan: {
      name: 'values',
      problem: 'One file written by an agent whose profile holds secrets under plain names.',
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
      `    env: { MY_CONF: ${JSON.stringify(apiKey)}, DB_URL: ${JSON.stringify(dbUrl)}, PLAIN: ${JSON.stringify(plain)}, SAGA_DEMO_LOG: ${JSON.stringify(seen)} }\n`,
  });
  const input = await startApprovedSaga(env, { repo, planFile, name: 'values', args: 'Write alpha' });
  await waitForPending(env, input.name, 'acceptance-1', 120_000);

  const runs = readFileSync(seen, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, string>);
  expect(runs).toContainEqual({ role: 'implementer', conf: apiKey, db: dbUrl, plain });

  let all = '';
  for (const run of await sagaRuns(env, input.name)) {
    const history = await env.client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    all += `${JSON.stringify(history)}\n${historyText(history).join('\n')}\n`;
  }
  expect(all).not.toContain(apiKey);
  expect(all).not.toContain(password);
  expect(all).toContain(plain);
}, 180_000);
