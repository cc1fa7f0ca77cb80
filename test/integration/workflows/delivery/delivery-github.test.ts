/**
 * Delivery to GitHub (Enterprise-style: `url: http://HOST/api/v3`, git on the same host), the same scenario
 * as delivery-gitea.test.ts against the GitHub stand-in (test/standins/github/), which checks every REST and
 * GraphQL request and answer against GitHub's published OpenAPI description and GraphQL schema, serves git
 * over smart HTTP from a real bare repository and merges there. Through bin/saga with the demo agent: two
 * stacked draft PRs; a failing commit status becomes a fix task whose commit is pushed (and merged up the
 * stack); success turns the PRs green; a review comment by a writer becomes a fix, a push and a reply, one by
 * a reader changes nothing; `saga accept --merge` merges both in order through the merge API, with branch
 * protection requiring the CI check; no token in the repository's config or history, no violation.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { githubForge } from '../../../../src/activities/forge/github';
import { pushEnv } from '../../../../src/activities/forge/push';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { deliveryBranch, phaseWorkflowId, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { PullRequestStatus, SagaStatus } from '../../../../src/domain/contract/state';
import { forgeEventSignal } from '../../../../src/domain/saga/messages';
import { runSaga } from '../../../harness/cli';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';
import { WORKFLOW_BUNDLE } from '../../../harness/server';
import { type GitHubActors, githubActors } from '../../../standins/github/actors';
import type { UserRecord } from '../../../standins/github/records';
import { type GitHubStandIn, startGitHubStandIn } from '../../../standins/github/server';

jest.setTimeout(600_000);

const TOKEN_ENV = 'SAGA_TEST_DELIVERY_GH_TOKEN';
const NAME = 'deliver-gh'; // not delivery-gitea.test.ts's: the suites share one server
let gh: GitHubStandIn;
let actors: GitHubActors;
let bob: UserRecord;
let carol: UserRecord;
let env: SagaTestEnv;
let repo: string;
let configFile: string;

const gitArgs = (args: string[]) => ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args];
const gitEnv = (extra: NodeJS.ProcessEnv = {}) => ({
  PATH: process.env.PATH,
  HOME: repo,
  GIT_CONFIG_NOSYSTEM: '1',
  ...extra,
});
const git = (args: string[]): string =>
  execFileSync('git', gitArgs(args), { cwd: repo, encoding: 'utf8', env: gitEnv() }).trim();
/** git talking to the stand-in: never a sync call, the stand-in answers in this process. */
const remoteGit = async (args: string[]): Promise<void> => {
  const auth = { ...pushEnv(gh.state.owner.token), GIT_TERMINAL_PROMPT: '0' };
  await promisify(execFile)('git', gitArgs(args), { cwd: repo, env: gitEnv(auth) });
};

/** The greeting sample on the stand-in as alice/demo, with the demo agent's answers for the two fix tasks. */
async function prepareRepo(): Promise<void> {
  repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
  const scriptFile = path.join(repo, '.saga', 'demo-script.json');
  const script = JSON.parse(readFileSync(scriptFile, 'utf8')) as { tasks: Record<string, unknown> };
  const fix = (file: string, summary: string) => ({
    attempts: [{ files: { [file]: `${summary}\n` }, report: { status: 'done', summary } }],
  });
  script.tasks.m1fix1 = fix('ci-fix.txt', 'Fixed the failing CI check.');
  script.tasks.m1fix2 = fix('review-fix.txt', 'Did what the reviewer asked.');
  writeFileSync(scriptFile, JSON.stringify(script, null, 2));
  git(['commit', '-qam', 'Demo answers for the fix tasks']);
  git(['remote', 'add', 'origin', gh.gitUrl]);
  await remoteGit(['push', '-q', '--force', 'origin', 'main']);
  configFile = path.join(env.tmp('config'), 'saga.config.yaml');
  writeFileSync(
    configFile,
    [
      'default_agent: demo',
      'attempts: 3',
      'delivery: pr',
      'forge:',
      '  kind: github',
      `  url: ${gh.apiUrl}`,
      '  repo: alice/demo',
      '  remote: origin',
      `  token_env: ${TOKEN_ENV}`,
      'ci_fix_attempts: 2',
      '',
    ].join('\n'),
  );
}

const prsOf = (s: SagaStatus): PullRequestStatus[] => s.pullRequests ?? [];
const pr = (s: SagaStatus, milestone: number): PullRequestStatus =>
  prsOf(s).find((p) => p.milestone === milestone)!;
/** What the forge webhook would do: the saga hears that something changed and its watch looks now. */
const poke = (kind: 'ci' | 'review') =>
  env.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .signal(forgeEventSignal, { kind, head: null, sha: null });
const status = (predicate: (s: SagaStatus) => boolean) => waitForStatus(env, NAME, predicate, 240_000);

beforeAll(async () => {
  gh = await startGitHubStandIn({ owner: 'alice', repo: 'demo' });
  bob = gh.addUser('bob', 'write');
  carol = gh.addUser('carol', 'read');
  actors = githubActors(gh, gh.addUser('ci-runner', 'write', 'Bot'));
  // Branch protection: nothing merges into main without a passing ci/test.
  gh.state.requiredContexts = ['ci/test'];
  // The worker reads the token from its environment at the moment of each forge call.
  process.env[TOKEN_ENV] = gh.state.owner.token;
  env = await createSagaTestEnv('deliver-gh');
  await env.startWorkers();
  await prepareRepo();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .cancel()
    .catch(() => undefined);
  await env?.close();
  await gh?.close();
  delete process.env[TOKEN_ENV];
});

test('GitHub: two stacked draft PRs, a CI fix, a review fix with its reply, then merge in order', async () => {
  const start = await runSaga(
    [
      'start',
      '--repo',
      repo,
      '--plan',
      GREETING_PLAN_FILE,
      '--config',
      configFile,
      '--name',
      NAME,
      '--',
      'Add greeting',
    ],
    env.cliEnv,
  );
  expect(start.stderr).toBe('');
  expect(start.code).toBe(0);
  await waitForPending(env, NAME, 'confirm-name', 120_000);
  expect((await runSaga(['respond', NAME, 'confirm-name', 'confirm'], env.cliEnv)).code).toBe(0);
  await waitForPending(env, NAME, 'plan-approval-1', 120_000);
  expect((await runSaga(['approve', NAME], env.cliEnv)).code).toBe(0);

  // Both milestones integrated: two stacked draft PRs (GitHub's own drafts), bodies with the exit criteria.
  const atAcceptance = await status((s) => s.pending.some((p) => p.id === 'acceptance-1'));
  const acceptance = atAcceptance.pending.find((p) => p.id === 'acceptance-1')!;
  expect(acceptance.options).toEqual(['accept', 'merge', 'mark ready', 'report issues']);
  const [m1, m2] = [pr(atAcceptance, 1), pr(atAcceptance, 2)];
  expect(m1).toMatchObject({ head: deliveryBranch(NAME, 1), base: 'main', draft: true, state: 'open' });
  expect(m2).toMatchObject({ head: deliveryBranch(NAME, 2), base: deliveryBranch(NAME, 1), draft: true });
  expect(acceptance.prompt).toContain(`#${m1.number} milestone 1`);
  const forge = githubForge(
    { kind: 'github', url: gh.apiUrl, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
    process.env,
  );
  await waitUntil(async () => (await forge.findPullRequest(m2.head))?.body.includes('(passed)') === true);
  const body = (await forge.findPullRequest(m1.head))!.body;
  expect(body).toContain('- [x] E1: greet() returns the greeting (passed)');
  expect(body).toContain(`Saga \`${NAME}\`: milestone 1`);
  expect((await forge.findPullRequest(m2.head))!.body).toContain(`Stacked on #${m1.number}`);
  expect(gh.state.pulls.map((p) => [p.draft, p.headSha])).toEqual([
    [true, m1.headSha],
    [true, m2.headSha],
  ]);

  // CI fails on the bottom PR: a fix task, its commit pushed, merged up into the PR above it.
  await actors.setStatus(m1.headSha, 'failure', 'ci/test', 'tests failed in 12s', 'http://ci.example/1');
  await poke('ci');
  const fixed = await status((s) => pr(s, 1).ciFixes === 1 && pr(s, 1).headSha !== m1.headSha);
  const [m1b, m2b] = [pr(fixed, 1), pr(fixed, 2)];
  expect(m2b.headSha).not.toBe(m2.headSha);
  await remoteGit(['fetch', '-q', 'origin']);
  expect(git(['show', `origin/${m1.head}:ci-fix.txt`])).toBe('Fixed the failing CI check.');
  expect(git(['show', `origin/${m2.head}:ci-fix.txt`])).toBe('Fixed the failing CI check.');
  expect(git(['rev-parse', `origin/${m1.head}`])).toBe(m1b.headSha);

  // The CI system says the new heads pass: the saga sees green.
  await actors.setStatus(m1b.headSha, 'success', 'ci/test', 'tests passed');
  await actors.setStatus(m2b.headSha, 'success', 'ci/test', 'tests passed');
  await poke('ci');
  await status((s) => prsOf(s).every((p) => p.ci === 'success'));

  // bob (write access) asks for a change: a fix task, a pushed commit, a reply; carol's (read) is listed only.
  const at = { pr: m1.number, commitId: m1b.headSha, path: 'src/greet.js', line: 1 };
  await actors.reviewComment(carol, { ...at, body: 'Rename everything' });
  await actors.reviewComment(bob, { ...at, body: 'Add a doc comment' });
  await poke('review');
  const reviewed = await status((s) => pr(s, 1).reviewFixes === 1 && pr(s, 1).headSha !== m1b.headSha);
  expect(pr(reviewed, 1).listedComments).toEqual([
    expect.objectContaining({ author: 'carol', why: 'no write access' }),
  ]);
  await remoteGit(['fetch', '-q', 'origin']);
  expect(git(['show', `origin/${m1.head}:review-fix.txt`])).toBe('Did what the reviewer asked.');
  await waitUntil(async () =>
    (await forge.reviewComments(m1.number)).some((c) =>
      c.body.includes(`Addressed in ${pr(reviewed, 1).headSha.slice(0, 12)}`),
    ),
  );
  // carol's comment started nothing: two fix tasks in all.
  expect(prsOf(reviewed).reduce((n, p) => n + p.ciFixes + p.reviewFixes, 0)).toBe(2);

  // The new heads pass CI (branch protection wants it); acceptance: merge, both in order, through the API.
  for (const p of prsOf(reviewed)) await actors.setStatus(p.headSha, 'success', 'ci/test', 'tests passed');
  await poke('ci');
  await status((s) => prsOf(s).every((p) => p.ci === 'success'));
  const merged = await runSaga(['accept', NAME, '--merge'], env.cliEnv);
  expect(merged.stderr).toBe('');
  expect(merged.code).toBe(0);
  expect(merged.stdout).toContain('Merge requested (acceptance-1)');
  const done = await status((s) => s.phase === 'complete');
  expect(prsOf(done).map((p) => p.state)).toEqual(['merged', 'merged']);
  await remoteGit(['fetch', '-q', 'origin']);
  for (const file of ['bin/greet.js', 'src/greet.js', 'ci-fix.txt', 'review-fix.txt'])
    expect(git(['cat-file', '-t', `origin/main:${file}`])).toBe('blob');
  // Real merge commits on main, m1's first, m2's (retargeted onto main) on top of it.
  const merges = git(['log', '--merges', '--format=%s', 'origin/main']).split('\n');
  expect(merges.slice(0, 2)).toEqual([
    `Merge pull request #${m2.number} from alice/${m2.head}`,
    `Merge pull request #${m1.number} from alice/${m1.head}`,
  ]);
  expect(gh.state.pulls.map((p) => p.base)).toEqual(['main', 'main']);

  // The histories this saga wrote replay on the current code.
  for (const id of [
    sagaWorkflowId(NAME),
    phaseWorkflowId(NAME, 'implementation'),
    phaseWorkflowId(NAME, 'delivery'),
  ]) {
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE } }, history, id);
  }

  // The token never reached the repository's config or its history; every call was GitHub's.
  const token = gh.state.owner.token;
  expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.toContain(token);
  expect(git(['log', '--all', '-p', '--format=%H %s%n%b'])).not.toContain(token);
  expect(gh.operations).toEqual(expect.arrayContaining(['git git-receive-pack', 'pulls/merge', 'graphql']));
  expect(gh.violations).toEqual([]);
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 500));
  }
}
