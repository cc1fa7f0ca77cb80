/**
 * A milestone's PR is opened exactly once against a REAL Gitea (test/harness/gitea.ts): the delivery branch
 * is pushed and its PR found before one is created, so a retry, or a crash between the push and the create
 * followed by `saga continue`, never opens a second; the saga's part of the body is replaced in place; the
 * token goes only to the forge's own host and stays out of .git/config.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  openPullRequest,
  type OpenPullRequestInput,
} from '../../../../src/activities/forge/open-pull-request';
import { giteaForge } from '../../../../src/activities/forge/gitea';
import { pushBranch } from '../../../../src/activities/forge/push';
import { deliveryBranch } from '../../../../src/domain/contract/naming';
import { renderPrBody } from '../../../../src/domain/delivery/pr-body';
import { startGitea, type TestGitea } from '../../../harness/gitea';

const TOKEN_ENV = 'SAGA_TEST_FORGE_TOKEN';
const root = mkdtempSync(path.join(os.tmpdir(), 'saga-open-pr-'));
const repo = path.join(root, 'repo');
let gitea: TestGitea;
let env: NodeJS.ProcessEnv;
let input: OpenPullRequestInput;

const git = (args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

const body = (result: 'passed' | null) =>
  renderPrBody({
    saga: 'greet',
    goal: 'Say hello',
    milestone: { id: 1, title: 'Greeting' },
    stackedOn: null,
    exitCriteria: [{ id: 'E1', text: 'greet prints hello', result }],
    tasks: [{ id: '1.1', title: 'Write greet', agent: 'demo', status: 'integrated' }],
    costUsd: 0,
    boardUrl: null,
    closes: null,
  });

beforeAll(async () => {
  gitea = await startGitea();
  env = { [TOKEN_ENV]: gitea.users.alice.token };
  execFileSync('git', ['clone', '-q', gitea.repo.cloneUrl, repo], {
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), ...gitea.gitEnv('alice') },
  });
  git(['checkout', '-q', '-b', 'saga/greet/integration']);
  writeFileSync(path.join(repo, 'greet.txt'), 'hello\n');
  git(['add', 'greet.txt']);
  git(['commit', '-q', '-m', 'Greeting']);
  input = {
    repo,
    remote: 'origin',
    target: { kind: 'gitea', url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
    head: deliveryBranch('greet', 1),
    headSha: git(['rev-parse', 'HEAD']),
    base: 'main',
    title: 'Saga greet: milestone 1, Greeting',
    body: body(null),
    draft: true,
  };
}, 120_000);

afterAll(async () => {
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The forge's PRs whose head is the delivery branch, open or closed. */
async function openPrs(): Promise<number[]> {
  const all = (await gitea.api('alice', 'GET', '/repos/alice/demo/pulls?state=all')) as {
    number: number;
    head: { ref: string };
  }[];
  return all.filter((pr) => pr.head.ref === input.head).map((pr) => pr.number);
}

test('a crash between the push and the create, then the retry: exactly one PR, its body updated in place', async () => {
  // The first try pushed and died before the create (the worker was killed): the branch is on the forge.
  git(['branch', '--force', input.head, input.headSha]);
  await pushBranch({
    repoDir: repo,
    remoteUrl: gitea.repo.cloneUrl,
    branch: input.head,
    tokenEnv: TOKEN_ENV,
    env,
  });
  expect(await openPrs()).toHaveLength(0);

  const first = await openPullRequest(input, env);
  expect(first).toMatchObject({ head: input.head, base: 'main', draft: true, headSha: input.headSha });
  expect(first.body).toContain('- [ ] E1: greet prints hello (not checked yet)');

  // Someone adds a note to the PR; the saga's next update keeps it.
  const forge = giteaForge(input.target, env);
  await forge.updatePullRequest(first.number, { body: `Reviewer note: fine by me\n\n${first.body}` });
  const again = await openPullRequest({ ...input, body: body('passed') }, env);
  expect(again.number).toBe(first.number);
  expect(again.body).toContain('Reviewer note: fine by me');
  expect(again.body).toContain('- [x] E1: greet prints hello (passed)');
  expect(await openPrs()).toHaveLength(1);
  expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.toContain(gitea.users.alice.token);
});

test('the token goes to the forge’s host only, and only a saga branch is moved', async () => {
  git(['remote', 'add', 'elsewhere', 'http://127.0.0.2:9/alice/demo.git']);
  await expect(openPullRequest({ ...input, remote: 'elsewhere' }, env)).rejects.toThrow(
    /remote 'elsewhere' is on 127\.0\.0\.2:9, not on the forge's host/,
  );
  await expect(openPullRequest({ ...input, head: 'main' }, env)).rejects.toThrow(
    /'main' is not a saga branch/,
  );
  expect(git(['rev-parse', 'main'])).not.toBe(input.headSha);
});
