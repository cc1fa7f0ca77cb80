/**
 * Delivery to a REAL Gitea (test/harness/gitea.ts), driven through bin/saga with the demo agent: a
 * two-milestone saga with `delivery: pr` opens two stacked draft PRs whose bodies carry the exit-criteria
 * checklist; a failing commit status set as a CI system would becomes a fix task whose commit is pushed (and
 * merged up the stack); success turns the PRs green; a review comment by a user with write access becomes a
 * fix task, a pushed commit and a reply in the thread, one by a user without write access changes nothing;
 * acceptance `merge` merges both PRs in order; no token in the repository's config or history.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { giteaForge } from '../../../../src/activities/forge/gitea';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../../../src/demo/sample-repo';
import { Worker } from '@temporalio/worker';
import { deliveryBranch, phaseWorkflowId, sagaWorkflowId } from '../../../../src/domain/contract/naming';
import type { PullRequestStatus, SagaStatus } from '../../../../src/domain/contract/state';
import { forgeEventSignal } from '../../../../src/domain/saga/messages';
import { runSaga } from '../../../harness/cli';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { recordHistory } from '../../../harness/histories';
import { WORKFLOW_BUNDLE } from '../../../harness/server';
import {
  createSagaTestEnv,
  waitForPending,
  waitForStatus,
  type SagaTestEnv,
} from '../../../harness/saga-env';

jest.setTimeout(600_000);

const TOKEN_ENV = 'SAGA_TEST_DELIVERY_TOKEN';
const NAME = 'deliver';
let gitea: TestGitea;
let env: SagaTestEnv;
let repo: string;
let configFile: string;

const git = (args: string[], extraEnv: Record<string, string> = {}): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: repo, GIT_CONFIG_NOSYSTEM: '1', ...extraEnv },
  }).trim();

/** The greeting sample on Gitea as alice/demo, with the demo agent's answers for the two fix tasks. */
function prepareRepo(): void {
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
  git(['remote', 'add', 'origin', gitea.repo.cloneUrl]);
  git(['push', '-q', '--force', 'origin', 'main'], gitea.gitEnv('alice'));
  configFile = path.join(env.tmp('config'), 'saga.config.yaml');
  writeFileSync(
    configFile,
    [
      'default_agent: demo',
      'attempts: 3',
      'delivery: pr',
      'forge:',
      '  kind: gitea',
      `  url: ${gitea.url}`,
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
  gitea = await startGitea();
  // The worker reads the token from its environment at the moment of each forge call.
  process.env[TOKEN_ENV] = gitea.users.alice.token;
  env = await createSagaTestEnv('deliver');
  await env.startWorkers();
  prepareRepo();
});

afterAll(async () => {
  await env?.client.workflow
    .getHandle(sagaWorkflowId(NAME))
    .cancel()
    .catch(() => undefined);
  await env?.close();
  await gitea?.stop();
  delete process.env[TOKEN_ENV];
});

test('two stacked draft PRs, a CI fix, a review fix with its reply, then merge in order', async () => {
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

  // Both milestones integrated: two stacked draft PRs, their bodies with the exit criteria's results.
  const atAcceptance = await status((s) => s.pending.some((p) => p.id === 'acceptance-1'));
  const acceptance = atAcceptance.pending.find((p) => p.id === 'acceptance-1')!;
  expect(acceptance.options).toEqual(['accept', 'merge', 'mark ready', 'report issues']);
  const [m1, m2] = [pr(atAcceptance, 1), pr(atAcceptance, 2)];
  expect(m1).toMatchObject({ head: deliveryBranch(NAME, 1), base: 'main', draft: true, state: 'open' });
  expect(m2).toMatchObject({ head: deliveryBranch(NAME, 2), base: deliveryBranch(NAME, 1), draft: true });
  expect(acceptance.prompt).toContain(`#${m1.number} milestone 1`);
  const forge = giteaForge(
    { kind: 'gitea', url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
    process.env,
  );
  await waitUntil(async () => (await forge.findPullRequest(m2.head))?.body.includes('(passed)') === true);
  const body = (await forge.findPullRequest(m1.head))!.body;
  expect(body).toContain('- [x] E1: greet() returns the greeting (passed)');
  expect(body).toContain(`Saga \`${NAME}\`: milestone 1`);
  expect((await forge.findPullRequest(m2.head))!.body).toContain(`Stacked on #${m1.number}`);
  expect((await forge.findPullRequest(m1.head))!.draft).toBe(true);

  // CI fails on the bottom PR: a fix task, its commit pushed, merged up into the PR above it.
  await gitea.setStatus(m1.headSha, 'failure', 'ci/test', 'tests failed in 12s', 'http://ci.example/1');
  await poke('ci');
  const fixed = await status((s) => pr(s, 1).ciFixes === 1 && pr(s, 1).headSha !== m1.headSha);
  const [m1b, m2b] = [pr(fixed, 1), pr(fixed, 2)];
  expect(m2b.headSha).not.toBe(m2.headSha);
  git(['fetch', '-q', 'origin'], gitea.gitEnv('alice'));
  expect(git(['show', `origin/${m1.head}:ci-fix.txt`])).toBe('Fixed the failing CI check.');
  expect(git(['show', `origin/${m2.head}:ci-fix.txt`])).toBe('Fixed the failing CI check.');
  expect(git(['rev-parse', `origin/${m1.head}`])).toBe(m1b.headSha);

  // The CI system says the new heads pass: the saga sees green.
  await gitea.setStatus(m1b.headSha, 'success', 'ci/test', 'tests passed');
  await gitea.setStatus(m2b.headSha, 'success', 'ci/test', 'tests passed');
  await poke('ci');
  await status((s) => prsOf(s).every((p) => p.ci === 'success'));

  // bob (write access) asks for a change: a fix task, a pushed commit, a reply; carol's (read) is listed only.
  await gitea.reviewComment('carol', {
    pr: m1.number,
    path: 'src/greet.js',
    line: 1,
    body: 'Rename everything',
  });
  await gitea.reviewComment('bob', {
    pr: m1.number,
    path: 'src/greet.js',
    line: 1,
    body: 'Add a doc comment',
  });
  await poke('review');
  const reviewed = await status((s) => pr(s, 1).reviewFixes === 1 && pr(s, 1).headSha !== m1b.headSha);
  expect(pr(reviewed, 1).listedComments).toEqual([
    expect.objectContaining({ author: 'carol', why: 'no write access' }),
  ]);
  git(['fetch', '-q', 'origin'], gitea.gitEnv('alice'));
  expect(git(['show', `origin/${m1.head}:review-fix.txt`])).toBe('Did what the reviewer asked.');
  await waitUntil(async () =>
    (await forge.reviewComments(m1.number)).some((c) =>
      c.body.includes(`Addressed in ${pr(reviewed, 1).headSha.slice(0, 12)}`),
    ),
  );
  // carol's comment started nothing: two fix tasks in all.
  expect(prsOf(reviewed).reduce((n, p) => n + p.ciFixes + p.reviewFixes, 0)).toBe(2);

  // Acceptance: merge. Both PRs merge in order, through the forge; main holds all of it.
  const both = await runSaga(['accept', NAME, '--merge', '--fast-forward'], env.cliEnv);
  expect(both.code).toBe(1);
  expect(both.stderr).toContain('give one of --fast-forward, --merge, not several');
  const merged = await runSaga(['accept', NAME, '--merge'], env.cliEnv);
  expect(merged.stderr).toBe('');
  expect(merged.code).toBe(0);
  expect(merged.stdout).toContain('Merge requested (acceptance-1)');
  const done = await status((s) => s.phase === 'complete');
  expect(prsOf(done).map((p) => p.state)).toEqual(['merged', 'merged']);
  git(['fetch', '-q', 'origin'], gitea.gitEnv('alice'));
  for (const file of ['bin/greet.js', 'src/greet.js', 'ci-fix.txt', 'review-fix.txt'])
    expect(git(['cat-file', '-t', `origin/main:${file}`])).toBe('blob');

  // The histories this saga wrote replay on the current code; the delivery watch's is kept for later releases.
  for (const id of [
    sagaWorkflowId(NAME),
    phaseWorkflowId(NAME, 'implementation'),
    phaseWorkflowId(NAME, 'delivery'),
  ]) {
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE } }, history, id);
    if (id === phaseWorkflowId(NAME, 'delivery')) recordHistory('deliveryWorkflow', history);
  }

  // The token never reached the repository's config or its history.
  const token = gitea.users.alice.token;
  expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.toContain(token);
  expect(git(['log', '--all', '-p', '--format=%H %s%n%b'])).not.toContain(token);
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 500));
  }
}
