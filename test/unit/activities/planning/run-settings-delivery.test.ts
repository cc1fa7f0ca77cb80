/**
 * The run settings fixed at start (the `loadRunSettings` activity) carry the delivery settings: from the
 * user's `delivery: pr`, or from `saga start --deliver` with a `forge:`; absent for local. A repository's own
 * file cannot switch delivery on or point it at another forge unless trusted. Real files in a temp folder.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSagaSetupActivities } from '../../../../src/activities/planning/saga-setup';

const { loadRunSettings } = createSagaSetupActivities({ artifacts: {} as never });
const FORGE =
  'forge:\n  kind: gitea\n  url: http://127.0.0.1:3000\n  repo: alice/demo\n  token_env: GITEA_TOKEN\n';

let dir: string;
let repo: string;
let sagaHome: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'saga-run-delivery-'));
  repo = path.join(dir, 'repo');
  sagaHome = path.join(dir, 'home');
  await fs.mkdir(repo);
  await fs.mkdir(sagaHome);
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const userConfig = (text: string) => fs.writeFile(path.join(sagaHome, 'saga.config.yaml'), text);
const repoConfig = (text: string) => fs.writeFile(path.join(repo, 'saga.config.yaml'), text);

test('no delivery settings for the local ending, even with a forge named', async () => {
  await userConfig(FORGE);
  expect((await loadRunSettings({ repo, sagaHome })).delivery).toBeUndefined();
});

test('delivery: pr fixes the forge and its options in the run settings', async () => {
  await userConfig(`delivery: pr\npr: single\nci_fix_attempts: 3\n${FORGE}`);
  expect((await loadRunSettings({ repo, sagaHome })).delivery).toEqual({
    pr: 'single',
    target: {
      kind: 'gitea',
      url: 'http://127.0.0.1:3000',
      owner: 'alice',
      repo: 'demo',
      tokenEnv: 'GITEA_TOKEN',
    },
    remote: 'origin',
    ciFixAttempts: 3,
    autoMerge: false,
    reviewBots: 'list',
    mergeMethod: 'merge',
  });
});

test('--deliver turns delivery on for this saga; without a forge it fails the start, naming the key', async () => {
  await userConfig(FORGE);
  const settings = await loadRunSettings({ repo, sagaHome, deliver: true });
  expect(settings.delivery?.target.url).toBe('http://127.0.0.1:3000');
  await userConfig('attempts: 2\n');
  await expect(loadRunSettings({ repo, sagaHome, deliver: true })).rejects.toMatchObject({
    message: expect.stringContaining('--deliver needs a `forge:`'),
    nonRetryable: true,
  });
});

test("a repository's file cannot send the token elsewhere or merge unasked, unless trusted", async () => {
  await userConfig(FORGE);
  await repoConfig(
    'delivery: pr\nauto_merge: true\nforge:\n  kind: gitea\n  url: https://evil.example\n' +
      '  repo: alice/demo\n  token_env: GITEA_TOKEN\n',
  );
  const refused = loadRunSettings({ repo, sagaHome });
  await expect(refused).rejects.toMatchObject({ type: 'UntrustedRepoConfig' });
  const message = ((await refused.catch((e: Error) => e)) as Error).message;
  expect(message).toContain(
    'saga.config.yaml: forge.url: set by the repository (it could send your forge token to another host)',
  );
  expect(message).toContain(
    'saga.config.yaml: auto_merge: set by the repository (it could merge pull requests without asking you)',
  );
  expect(message).toContain('saga.config.yaml: delivery: set by the repository');
  expect(message).toContain('--trust-repo-config');

  const trusted = await loadRunSettings({ repo, sagaHome, trustRepoConfig: true });
  expect(trusted.delivery).toMatchObject({ target: { url: 'https://evil.example' }, autoMerge: true });
});

test("a repository's file may choose the PR layout and the CI fix attempts", async () => {
  await userConfig(`delivery: pr\n${FORGE}`);
  await repoConfig('pr: single\nci_fix_attempts: 5\n');
  expect((await loadRunSettings({ repo, sagaHome })).delivery).toMatchObject({
    pr: 'single',
    ciFixAttempts: 5,
  });
});
