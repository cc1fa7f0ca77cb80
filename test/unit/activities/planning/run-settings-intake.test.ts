/**
 * A saga from an issue fixes its tracker in the run settings (the `loadRunSettings` activity, given the
 * issue's reference): from `intake:`, the forge, or Linear's defaults; a missing key fails the start naming
 * it. A repository's own file may choose where questions go and the watch's pace, never the tracker or its
 * token, unless trusted; no token variable of a tracker reaches a sandbox. Real files in a temp folder.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSagaSetupActivities } from '../../../../src/activities/planning/saga-setup';
import type { TrackerRef } from '../../../../src/domain/tracker/tracker-ref';

const { loadRunSettings } = createSagaSetupActivities({ artifacts: {} as never });
const GITEA_REF: TrackerRef = { kind: 'gitea', owner: 'alice', repo: 'demo', number: 3 };
const LINEAR_REF: TrackerRef = { kind: 'linear', team: 'ENG', number: 42 };
const INTAKE = 'intake:\n  gitea:\n    url: http://127.0.0.1:3000\n    token_env: GITEA_TOKEN\n';

let dir: string;
let repo: string;
let sagaHome: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-run-intake-'));
  repo = path.join(dir, 'repo');
  sagaHome = path.join(dir, 'home');
  await fs.mkdir(repo);
  await fs.mkdir(sagaHome);
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const userConfig = (text: string) => fs.writeFile(path.join(sagaHome, 'saga.config.yaml'), text);
const repoConfig = (text: string) => fs.writeFile(path.join(repo, 'saga.config.yaml'), text);
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: Error & { type?: string }) => e,
  );

test('a typed saga has no intake settings; a saga from an issue has its tracker and where questions go', async () => {
  await userConfig(`${INTAKE}  questions: issue\n`);
  expect((await loadRunSettings({ repo, sagaHome })).intake).toBeUndefined();
  expect((await loadRunSettings({ repo, sagaHome, intake: GITEA_REF })).intake).toEqual({
    tracker: { kind: 'gitea', url: 'http://127.0.0.1:3000', tokenEnv: 'GITEA_TOKEN' },
    questions: 'issue',
  });
  expect((await loadRunSettings({ repo, sagaHome, intake: LINEAR_REF })).intake).toEqual({
    tracker: { kind: 'linear', url: 'https://api.linear.app/graphql', tokenEnv: 'LINEAR_API_KEY' },
    questions: 'issue',
  });
});

test('a tracker the config does not name fails the start once, naming the key', async () => {
  await userConfig('attempts: 2\n');
  const error = await failure(loadRunSettings({ repo, sagaHome, intake: GITEA_REF }));
  expect(error).toMatchObject({ type: 'InvalidSagaConfig', nonRetryable: true });
  expect(error!.message).toMatch(/^intake\.gitea\.token_env: a Gitea tracker needs the name of the variable/);
});

test('pass_env naming a tracker token is refused: a configured one by the schema, a default one at start', async () => {
  await userConfig(`${INTAKE}pass_env: [CI, GITEA_TOKEN]\n`);
  const configured = await failure(loadRunSettings({ repo, sagaHome }));
  expect(configured!.message).toContain(
    'pass_env[1]: is intake.gitea.token_env: the gitea tracker token is never passed to agents, checks or set-up commands',
  );
  await userConfig('agents:\n  claude: {pass_env: [LINEAR_API_KEY]}\n');
  expect((await loadRunSettings({ repo, sagaHome })).intake).toBeUndefined();
  const fallback = await failure(loadRunSettings({ repo, sagaHome, intake: LINEAR_REF }));
  expect(fallback).toMatchObject({ type: 'InvalidSagaConfig', nonRetryable: true });
  expect(fallback!.message).toBe(
    'agents.claude.pass_env[0]: is intake.linear.token_env: the linear tracker token is never passed to agents, checks or set-up commands',
  );
});

test("a repository's file cannot point a tracker elsewhere or name its token, unless trusted", async () => {
  await userConfig(INTAKE);
  await repoConfig(
    'intake:\n  gitea:\n    url: https://evil.example\n    token_env: GITEA_TOKEN\n  linear:\n    token_env: OTHER_KEY\n',
  );
  const refused = await failure(loadRunSettings({ repo, sagaHome, intake: GITEA_REF }));
  expect(refused).toMatchObject({ type: 'UntrustedRepoConfig' });
  expect(refused!.message).toContain(
    'saga.config.yaml: intake.gitea.url: set by the repository (it could send your tracker token to another host)',
  );
  expect(refused!.message).toContain(
    'saga.config.yaml: intake.linear.token_env: set by the repository (it could send your tracker token to another host)',
  );
  expect(refused!.message).not.toContain('intake.gitea.token_env');
  expect(refused!.message).toContain('--trust-repo-config');
  const trusted = await loadRunSettings({ repo, sagaHome, intake: GITEA_REF, trustRepoConfig: true });
  expect(trusted.intake?.tracker.url).toBe('https://evil.example');
});

test("a repository's file may choose where questions go and the watch's pace", async () => {
  await userConfig(INTAKE);
  await repoConfig('intake:\n  questions: issue\n  max_sagas: 5\n  poll_seconds: 120\n');
  expect((await loadRunSettings({ repo, sagaHome, intake: GITEA_REF })).intake).toEqual({
    tracker: { kind: 'gitea', url: 'http://127.0.0.1:3000', tokenEnv: 'GITEA_TOKEN' },
    questions: 'issue',
  });
});
