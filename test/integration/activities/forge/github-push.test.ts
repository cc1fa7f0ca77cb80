/**
 * Delivery's git side against the GitHub stand-in addressed as GitHub Enterprise (`url: …/api/v3`, git on
 * the same host): openPullRequest pushes with the worker's git through `git http-backend` (the token in
 * Basic auth from the credential helper after the stand-in's 401, as GitHub asks), the PR's head and base
 * are the pushed commits, a reader's or an unknown token is refused and changes nothing, and the merge API
 * makes real commits on the base branch, refusing a head that moved (409); a retargeted PR then merges too.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { githubForge } from '../../../../src/activities/forge/github';
import {
  openPullRequest,
  type OpenPullRequestInput,
} from '../../../../src/activities/forge/open-pull-request';
import type { Forge, ForgeTarget } from '../../../../src/activities/forge/port';
import { pushBranch } from '../../../../src/activities/forge/push';
import { deliveryBranch } from '../../../../src/domain/contract/naming';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

const TOKEN_ENV = 'SAGA_TEST_GH_PUSH_TOKEN';
let root: string;
let repo: string;
let gh: GitHubStandIn;
let env: NodeJS.ProcessEnv;
let target: ForgeTarget;
let forge: Forge;

const git = (args: string[], cwd = repo): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

/** The stand-in's own repository, read directly (what GitHub holds). */
const onForge = (args: string[]): string => gh.state.git.git(args);

function commit(file: string, text: string, message: string): string {
  writeFileSync(path.join(repo, file), text);
  git(['add', file]);
  git(['commit', '-q', '-m', message]);
  return git(['rev-parse', 'HEAD']);
}

const prInput = (milestone: number, headSha: string, base: string): OpenPullRequestInput => ({
  repo,
  remote: 'origin',
  target,
  head: deliveryBranch('greet', milestone),
  headSha,
  base,
  title: `Saga greet: milestone ${milestone}`,
  body: `milestone ${milestone}`,
  draft: true,
});

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'saga-gh-push-'));
  gh = await startGitHubStandIn({ owner: 'octo', repo: 'widgets' });
  env = { [TOKEN_ENV]: gh.state.owner.token };
  target = { kind: 'github', url: gh.apiUrl, owner: 'octo', repo: 'widgets', tokenEnv: TOKEN_ENV };
  forge = githubForge(target, env);
  // Cloning a public repository needs no credentials. (Not a sync call: the stand-in answers in this process.)
  await promisify(execFile)('git', ['clone', '-q', gh.gitUrl, path.join(root, 'repo')], {
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
  });
  repo = path.join(root, 'repo');
});

afterEach(async () => {
  const { violations } = gh;
  await gh.close();
  rmSync(root, { recursive: true, force: true });
  expect(violations).toEqual([]);
});

test('openPullRequest pushes over smart HTTP with the token from the credential helper; the PR is the push', async () => {
  expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('# widgets\n');
  const sha = commit('greet.txt', 'hello\n', 'Greeting');
  const pr = await openPullRequest(prInput(1, sha, 'main'), env);
  expect(pr).toMatchObject({ head: 'saga/greet/deliver-m1', base: 'main', draft: true, headSha: sha });
  expect(onForge(['rev-parse', 'refs/heads/saga/greet/deliver-m1'])).toBe(sha);

  // GitHub's answer to a push without credentials is 401 with a challenge; git then asked the helper.
  const pushes = gh.requests.filter((r) => r.path.includes('service=git-receive-pack'));
  expect(pushes.map((r) => (r.headers.authorization ?? 'none').split(' ')[0])).toEqual(['none', 'Basic']);
  const basic = Buffer.from(pushes[1].headers.authorization!.split(' ')[1], 'base64').toString('utf8');
  expect(basic).toBe(`x-access-token:${gh.state.owner.token}`);
  expect(gh.operations).toContain('git git-receive-pack');

  // A new commit pushed: the open PR follows it; the retry finds the PR, never a second one.
  const next = commit('greet.txt', 'hello, world\n', 'Louder');
  const again = await openPullRequest(prInput(1, next, 'main'), env);
  expect(again).toMatchObject({ number: pr.number, headSha: next });
  expect(gh.state.pulls).toHaveLength(1);
  expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.toContain(gh.state.owner.token);
});

test("a reader's token and an unknown token are refused and change nothing", async () => {
  const sha = commit('greet.txt', 'hello\n', 'Greeting');
  git(['branch', 'saga/greet/deliver-m1', sha]);
  const push = (token: string) =>
    pushBranch({
      repoDir: repo,
      remoteUrl: gh.gitUrl,
      branch: 'saga/greet/deliver-m1',
      tokenEnv: TOKEN_ENV,
      env: { [TOKEN_ENV]: token },
    });
  const reader = gh.addUser('carol', 'read');
  const denied = await push(reader.token).catch((e: Error) => e);
  expect(String(denied)).toContain('The requested URL returned error: 403');
  expect(String(denied)).not.toContain(reader.token);
  const unknown = await push('ghp_nobody').catch((e: Error) => e);
  expect(String(unknown)).toContain(`Authentication failed for '${gh.gitUrl}/'`);
  expect(String(unknown)).not.toContain('ghp_nobody');
  expect([...gh.state.git.branches().keys()]).toEqual(['main']);
});

test('merge makes real commits on the base; a moved head is refused (409); a retargeted PR merges', async () => {
  const main0 = onForge(['rev-parse', 'main']);
  const m1 = await openPullRequest(prInput(1, commit('a.txt', 'a\n', 'A'), 'main'), env);
  const m2 = await openPullRequest(prInput(2, commit('b.txt', 'b\n', 'B'), m1.head), env);
  expect(m2).toMatchObject({ base: m1.head });
  await forge.markReady(m1.number);
  await forge.markReady(m2.number);

  expect(await forge.merge(m1.number, 'merge', m1.headSha)).toEqual({
    merged: true,
    message: 'Pull Request successfully merged',
  });
  const main1 = onForge(['rev-parse', 'main']);
  expect(onForge(['rev-list', '--parents', '-n', '1', main1]).split(' ').slice(1)).toEqual([
    main0,
    m1.headSha,
  ]);
  expect(onForge(['log', '-1', '--format=%s', main1])).toBe(
    `Merge pull request #${m1.number} from octo/${m1.head}`,
  );
  expect(await forge.findPullRequest(m1.head)).toMatchObject({ state: 'merged' });

  // Someone pushes to m2 after the saga read its head: the merge with the old sha is refused.
  const moved = commit('c.txt', 'c\n', 'C');
  git(['branch', '--force', m2.head, moved]);
  await pushBranch({ repoDir: repo, remoteUrl: gh.gitUrl, branch: m2.head, tokenEnv: TOKEN_ENV, env });
  expect(await forge.merge(m2.number, 'squash', m2.headSha)).toEqual({
    merged: false,
    message: 'Head branch was modified. Review and try the merge again.',
  });
  expect(onForge(['rev-parse', 'main'])).toBe(main1);

  // Retargeted onto main, then squashed: one commit on main with everything.
  const retargeted = await forge.updatePullRequest(m2.number, { base: 'main' });
  expect(retargeted).toMatchObject({ base: 'main', headSha: moved });
  expect(await forge.merge(m2.number, 'squash', moved)).toMatchObject({ merged: true });
  const main2 = onForge(['rev-parse', 'main']);
  expect(onForge(['rev-list', '--parents', '-n', '1', main2]).split(' ').slice(1)).toEqual([main1]);
  for (const file of ['a.txt', 'b.txt', 'c.txt'])
    expect(onForge(['cat-file', '-t', `main:${file}`])).toBe('blob');
});
