/**
 * `saga start --from linear:TEAM-N` through bin/saga against the Linear stand-in (test/standins/linear/,
 * which validates every document against Linear's schema) and the run's real Temporal server: an unset token
 * variable and an issue that does not exist each get a clear error and start nothing; a good reference
 * starts the saga named after the issue, its goal the issue's title, its status showing where it came from.
 * The Gitea counterpart is start-from.test.ts beside this one.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSampleRepo } from '../../../src/demo/sample-repo';
import { sagaWorkflowId } from '../../../src/domain/contract/naming';
import { issueSagaName } from '../../../src/domain/tracker/tracker-ref';
import { runSaga } from '../../harness/cli';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { startLinearStandIn, type LinearStandIn } from '../../standins/linear/server';

jest.setTimeout(180_000);

const TOKEN_ENV = 'SAGA_TEST_LINEAR_KEY';
const TITLE = 'Greet the user by name';

let env: SagaTestEnv;
let linear: LinearStandIn;
let key: string;
let repo: string;
let configFile: string;

beforeAll(async () => {
  env = await createSagaTestEnv('start-from-linear');
  await env.startWorkers();
  linear = await startLinearStandIn();
  linear.addTeam('ENG', 'Engineering');
  key = linear.addUser('alice', ['ENG']).apiKey;
  linear.addIssue('ENG', { title: TITLE, description: 'The greeting should say the name.' });
  const dir = env.tmp('from');
  repo = createSampleRepo(path.join(dir, 'greeting'));
  configFile = path.join(dir, 'saga.config.yaml');
  writeFileSync(
    configFile,
    `default_agent: demo\nintake:\n  linear:\n    url: ${linear.apiUrl}\n    token_env: ${TOKEN_ENV}\n`,
  );
});

afterAll(async () => {
  await linear?.close();
  await env?.close();
});

afterEach(() => {
  // Taken out each time, so a violation fails the test that made it.
  expect(linear.violations.splice(0)).toEqual([]);
});

/** `saga start --from REF` with the key variable as given (alice's by default; null: not set). */
async function startFrom(ref: string, token: string | null = key) {
  const cliEnv: NodeJS.ProcessEnv = { ...env.cliEnv };
  delete cliEnv[TOKEN_ENV];
  if (token !== null) cliEnv[TOKEN_ENV] = token;
  const args = ['start', '--repo', repo, '--config', configFile, '--from', ref, '--skip-agent-check'];
  const result = await runSaga(args, cliEnv, 90_000);
  if (token) expect(result.stdout + result.stderr).not.toContain(token);
  return result;
}

/** No saga directory, no saga workflow of this file's issue: nothing was started (other files share the server). */
async function expectNothingStarted(result: { stdout: string }) {
  expect(result.stdout).not.toContain('Started saga');
  const dirs = existsSync(env.sagaHome) ? readdirSync(env.sagaHome).filter((f) => !f.startsWith('.')) : [];
  expect(dirs).toEqual([]);
  const sagas = JSON.parse((await runSaga(['list', '--json'], env.cliEnv)).stdout) as { name: string }[];
  const ours = issueSagaName({ kind: 'linear', team: 'ENG', number: 1 });
  expect(sagas.map((s) => s.name).filter((n) => n === ours)).toEqual([]);
}

test('the key variable not set: refused naming the variable and its key, nothing started', async () => {
  const before = linear.operations.length;
  const r = await startFrom('linear:ENG-1', null);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`${TOKEN_ENV} is not set: export the linear token in ${TOKEN_ENV}`);
  expect(r.stderr).toContain('intake.linear.token_env');
  // Refused before Linear was asked anything.
  expect(linear.operations.length).toBe(before);
  await expectNothingStarted(r);
});

test('an issue that does not exist: refused saying so, nothing started', async () => {
  const r = await startFrom('linear:ENG-99');
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('linear:ENG-99: not found');
  await expectNothingStarted(r);
});

test('a good reference: the saga named after the issue, its title the goal, its source in the status', async () => {
  const ref = 'linear:ENG-1';
  const name = issueSagaName({ kind: 'linear', team: 'ENG', number: 1 });
  const url = `${linear.url}/issue/ENG-1`;
  const r = await startFrom(ref);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`Goal: ${TITLE}`);
  expect(r.stdout).toContain(`Source: ${ref} (${url})`);
  expect(r.stdout).toContain(`Started saga '${name}'`);

  const json = JSON.parse((await runSaga(['status', name, '--json'], env.cliEnv)).stdout) as {
    goal: string;
    source: unknown;
  };
  expect(json.source).toEqual({ ref, url });
  expect(json.goal).toBe(TITLE);

  const cancel = await runSaga(['cancel', name], env.cliEnv);
  expect(cancel.code).toBe(0);
  await env.client.workflow
    .getHandle(sagaWorkflowId(name))
    .result()
    .catch(() => undefined);
});
