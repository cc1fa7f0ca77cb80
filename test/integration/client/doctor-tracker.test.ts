/**
 * `saga doctor`'s tracker checks through bin/saga against a REAL Gitea (test/harness/gitea.ts): with
 * `intake.gitea` in the config, a good token's variable is named as set and the tracker answers as its user;
 * a variable that is not set is named (nothing called), a refused token says to make a new one, a tracker
 * that does not answer names its url. A token's value is never printed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runSaga } from '../../harness/cli';
import { startGitea, type TestGitea } from '../../harness/gitea';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';

jest.setTimeout(120_000);

const TOKEN_ENV = 'SAGA_TEST_TRACKER_TOKEN';
let env: SagaTestEnv;
let gitea: TestGitea;

beforeAll(async () => {
  env = await createSagaTestEnv('doctor-tracker');
  gitea = await startGitea();
});

afterAll(async () => {
  await gitea?.stop();
  await env?.close();
});

/** `saga doctor --config F` with `intake.gitea` at `url`, the token variable as given (null: not set). */
async function doctor(token: string | null, url = gitea.url) {
  const configFile = path.join(env.tmp('config'), 'saga.config.yaml');
  writeFileSync(
    configFile,
    `default_agent: demo\nintake:\n  gitea:\n    url: ${url}\n    token_env: ${TOKEN_ENV}\n`,
  );
  const cliEnv: NodeJS.ProcessEnv = { ...env.cliEnv };
  delete cliEnv[TOKEN_ENV];
  if (token !== null) cliEnv[TOKEN_ENV] = token;
  const result = await runSaga(['doctor', '--config', configFile], cliEnv, 90_000);
  if (token) expect(result.stdout + result.stderr).not.toContain(token);
  return result;
}

test("bob's token: the variable is set and the tracker answers as bob", async () => {
  const r = await doctor(gitea.users.bob.token);
  expect(r.stdout).toContain(`OK    tracker gitea token: ${TOKEN_ENV} is set`);
  expect(r.stdout).toContain(`OK    tracker gitea: ${gitea.url} answers as bob`);
});

test('the variable not set: FAIL naming it, with the fix', async () => {
  const r = await doctor(null);
  expect(r.stdout).toContain(
    `FAIL  tracker gitea token: ${TOKEN_ENV} is not set: export the gitea token in ${TOKEN_ENV}`,
  );
  expect(r.stdout).not.toMatch(/^(OK|FAIL) +tracker gitea: /m);
  expect(r.code).toBe(2);
});

test('a refused token: FAIL saying to make a new one', async () => {
  const r = await doctor('not-a-real-token-1234');
  expect(r.stdout).toMatch(
    new RegExp(
      `^FAIL  tracker gitea: .*The token in ${TOKEN_ENV} is refused: it is wrong, expired or revoked`,
      'm',
    ),
  );
  expect(r.code).toBe(2);
});

test('a tracker that does not answer: FAIL naming its url', async () => {
  const r = await doctor(gitea.users.bob.token, 'http://127.0.0.1:9');
  expect(r.stdout).toMatch(/^FAIL {2}tracker gitea: .*Check the tracker's url \(http:\/\/127\.0\.0\.1:9\)/m);
  expect(r.code).toBe(2);
});
