/**
 * `saga start --config FILE`: the file given (outside the repo) is the one the saga runs with, not only the
 * one `saga start` validated — an agent profile it alone declares runs the task.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createFleetRepo, git, planTask, startApprovedSaga } from '../../harness/fleet-saga';
import { createSagaTestEnv, useEnvInProcess, waitForStatus, type SagaTestEnv } from '../../harness/saga-env';

let env: SagaTestEnv;

beforeAll(async () => {
  env = await createSagaTestEnv('config-file');
  useEnvInProcess(env);
  await env.startWorkers();
});

afterAll(async () => {
  await env?.close();
});

test('a profile only the --config file declares runs the saga', async () => {
  const dir = env.tmp('cfg');
  const { repo, planFile } = createFleetRepo(dir, {
    plan: {
      name: 'cfgfile',
      problem: 'One file.',
      scope: { in: ['one.txt'], out: [], delegated: [] },
      exit_criteria: [{ id: 'E1', text: 'one.txt exists', check: 'test -f one.txt' }],
      milestones: [
        {
          id: 1,
          slug: 'one',
          title: 'One',
          depends_on: [],
          goal: 'one.txt.',
          validation: [{ text: 'one.txt exists', check: 'test -f one.txt' }],
          tasks: [planTask(1, 'one', ['one.txt'], 'test -f one.txt')],
        },
      ],
    },
    script: { tasks: { '1.1': { attempts: [{ files: { 'one.txt': 'one\n' } }] } } },
  });
  // Outside the repo, and the only place that declares `mine`.
  const configFile = path.join(dir, 'elsewhere.yaml');
  writeFileSync(
    configFile,
    'agents:\n  mine:\n    command: ["{node}", "{saga_root}/agents/demo-agent.js"]\n',
  );
  const input = await startApprovedSaga(env, {
    repo,
    planFile,
    name: 'cfgfile',
    args: 'One file',
    agent: 'mine',
    config: configFile,
  });
  expect(input.configFile).toBe(configFile);
  const status = await waitForStatus(
    env,
    input.name,
    (s) => s.phase === 'failed' || s.pending.some((p) => p.kind === 'acceptance' || p.kind === 'escalation'),
  );
  const task = status.milestones[0]!.tasks[0]!;
  expect({ status: task.status, reason: task.reason, agent: task.agent?.profile }).toEqual({
    status: 'integrated',
    reason: null,
    agent: 'mine',
  });
  expect(git(repo, 'show', `${status.integrationBranch}:one.txt`)).toBe('one');
});
