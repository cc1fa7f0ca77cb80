/**
 * `saga doctor`'s forge checks through bin/saga against a REAL Gitea (test/harness/gitea.ts) and the run's
 * real Temporal server: alice's token (owner) passes, carol's (read only) cannot push, an unset variable is
 * named (its value is never printed), a refused token, a forge that does not answer and a remote on another
 * host each name their fix. A forge named by the repository's own file is never called with the user's token.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { createSampleRepo } from '../../../src/demo/sample-repo';
import { runSaga } from '../../harness/cli';
import { startGitea, type TestGitea } from '../../harness/gitea';
import { createSagaTestEnv, type SagaTestEnv } from '../../harness/saga-env';
import { freePort } from '../../harness/wait';

jest.setTimeout(120_000);

const TOKEN_ENV = 'SAGA_TEST_FORGE_TOKEN';
let env: SagaTestEnv;
let gitea: TestGitea;
let repo: string;

beforeAll(async () => {
  env = await createSagaTestEnv('doctor-forge');
  gitea = await startGitea();
  repo = createSampleRepo(path.join(env.tmp('repo'), 'demo'));
  execFileSync('git', ['remote', 'add', 'origin', gitea.repo.cloneUrl], { cwd: repo });
  execFileSync('git', ['remote', 'add', 'elsewhere', 'https://example.invalid/alice/demo.git'], {
    cwd: repo,
  });
});

afterAll(async () => {
  await gitea?.stop();
  await env?.close();
});

/** `saga doctor --repo R --config F` with a forge of `url` (and `remote`), the token variable as given. */
async function doctor(token: string | undefined, forge: { url?: string; remote?: string } = {}) {
  const configFile = path.join(env.tmp('config'), 'saga.config.yaml');
  writeFileSync(
    configFile,
    'default_agent: demo\nforge:\n  kind: gitea\n' +
      `  url: ${forge.url ?? gitea.url}\n  repo: alice/demo\n  remote: ${forge.remote ?? 'origin'}\n` +
      `  token_env: ${TOKEN_ENV}\n`,
  );
  const cliEnv: NodeJS.ProcessEnv = { ...env.cliEnv };
  delete cliEnv[TOKEN_ENV];
  if (token !== undefined) cliEnv[TOKEN_ENV] = token;
  const result = await runSaga(['doctor', '--repo', repo, '--config', configFile], cliEnv, 90_000);
  if (token) expect(result.stdout + result.stderr).not.toContain(token);
  return result;
}

test("alice's token: the forge answers, she can push and open PRs, the remote is on the forge's host", async () => {
  const r = await doctor(gitea.users.alice.token);
  expect(r.stdout).toContain(`OK    forge token: ${TOKEN_ENV} is set`);
  expect(r.stdout).toContain(
    `OK    forge: alice/demo on ${gitea.url} (gitea): alice can push and open pull requests`,
  );
  expect(r.stdout).toContain(`OK    forge remote: origin is ${gitea.repo.cloneUrl}`);
  expect(r.stdout).not.toMatch(/^FAIL/m);
  expect(r.code).toBe(0);
});

test("carol's read-only token: FAIL, she cannot push, with the fix", async () => {
  const r = await doctor(gitea.users.carol.token);
  expect(r.stdout).toContain(
    `FAIL  forge: alice/demo on ${gitea.url} (gitea): carol (the user of ${TOKEN_ENV}) cannot push to ` +
      'alice/demo: give carol write access to it, or use the token of a user who has it',
  );
  expect(r.code).toBe(2);
});

test('an unset token variable: FAIL naming the variable; the forge is not called', async () => {
  const r = await doctor(undefined);
  expect(r.stdout).toContain(
    `FAIL  forge token: ${TOKEN_ENV} (forge.token_env) is not set: export the forge token in ${TOKEN_ENV}`,
  );
  expect(r.stdout).not.toMatch(/^\w+ +forge: /m);
  expect(r.code).toBe(2);
});

test('a refused token and a forge that does not answer: each FAIL names what to change', async () => {
  const refused = await doctor('0123456789abcdef0123456789abcdef01234567');
  expect(refused.stdout).toMatch(
    /^FAIL {2}forge: .*HTTP 401.*The token in SAGA_TEST_FORGE_TOKEN is refused/m,
  );
  const down = `http://127.0.0.1:${await freePort()}`;
  const unreachable = await doctor(gitea.users.alice.token, { url: down });
  expect(unreachable.stdout).toMatch(
    /^FAIL {2}forge: alice\/demo on http:\/\/127\.0\.0\.1:\d+ \(gitea\): .*Check forge\.url and that the forge is up/m,
  );
  expect(unreachable.stdout).toMatch(
    /^FAIL {2}forge remote: the remote 'origin' is on 127\.0\.0\.1:\d+, not on/m,
  );
});

test('a remote on another host, or none: FAIL, the token is not sent there', async () => {
  const other = await doctor(gitea.users.alice.token, { remote: 'elsewhere' });
  expect(other.stdout).toContain(
    "FAIL  forge remote: the remote 'elsewhere' is on example.invalid, not on the forge's host",
  );
  expect(other.stdout).toContain('set forge.remote to the forge');
  const none = await doctor(gitea.users.alice.token, { remote: 'upstream' });
  expect(none.stdout).toContain(
    `FAIL  forge remote: ${repo} has no remote 'upstream' (forge.remote): add it`,
  );
});

test("a forge the repository's own file names is not called: the user's token does not go there", async () => {
  const seen: IncomingHttpHeaders[] = [];
  const trap = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  const { port } = trap.address() as { port: number };
  try {
    const hostile = createSampleRepo(path.join(env.tmp('hostile'), 'demo'));
    appendFileSync(
      path.join(hostile, 'saga.config.yaml'),
      `forge:\n  kind: gitea\n  url: http://127.0.0.1:${port}\n  repo: alice/demo\n  token_env: ${TOKEN_ENV}\n`,
    );
    const configFile = path.join(env.tmp('config'), 'saga.config.yaml');
    writeFileSync(configFile, 'default_agent: demo\n');
    const cliEnv = { ...env.cliEnv, [TOKEN_ENV]: gitea.users.alice.token };
    const r = await runSaga(['doctor', '--repo', hostile, '--config', configFile], cliEnv, 90_000);
    expect(r.stdout).toMatch(
      /^FAIL {2}forge: not checked: the repository's saga\.config\.yaml sets forge\.kind, forge\.url, forge\.repo, forge\.token_env, and your token is not sent to a forge a repository names/m,
    );
    expect(r.stdout + r.stderr).not.toContain(gitea.users.alice.token);
    expect(seen).toEqual([]);
    expect(r.code).toBe(2);
  } finally {
    await new Promise((resolve) => trap.close(resolve));
  }
});
