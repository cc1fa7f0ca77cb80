/**
 * The delivery scenario of issue-sized end-to-end tests, one for each forge (delivery-gitea.test.ts on the
 * real Gitea, delivery-github.test.ts on the GitHub stand-in): a two-milestone saga through bin/saga with the
 * demo agent and `delivery: pr`; two stacked draft PRs whose bodies carry the exit criteria; a failing commit
 * status becomes a fix task, pushed and merged up the stack; success turns the PRs green; a writer's review
 * comment becomes a fix, a push and a reply, a reader's changes nothing; `saga accept --merge` merges both; the
 * histories replay; no token in the repository's config or history. Each test file brings its forge and adds
 * what only that forge shows.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import type { Forge } from '../../src/activities/forge/port';
import { createSampleRepo, GREETING_PLAN_FILE } from '../../src/demo/sample-repo';
import { deliveryBranch, phaseWorkflowId, sagaWorkflowId } from '../../src/domain/contract/naming';
import type { PullRequestStatus, SagaStatus } from '../../src/domain/contract/state';
import { forgeEventSignal } from '../../src/domain/saga/messages';
import { runSaga } from './cli';
import { waitForPending, waitForStatus, type SagaTestEnv } from './saga-env';
import { WORKFLOW_BUNDLE } from './server';

/** The forge under test, as the scenario drives it. */
export interface ScenarioForge {
  /** The lines under `forge:` in saga.config.yaml (kind, url, repo, token_env). */
  config: string[];
  /** The URL of alice/demo's git repository on it (the saga's `origin`). */
  remoteUrl: string;
  /** The environment for the test's own git to push and fetch as the repository's owner. */
  ownerGitEnv: Record<string, string>;
  /** The saga's adapter, as the test reads the PRs with it. */
  adapter: Forge;
  /** A commit status as the CI system sets one. */
  setStatus(
    sha: string,
    state: 'failure' | 'success',
    description: string,
    targetUrl?: string,
  ): Promise<unknown>;
  /** A line comment on a PR's head by the user with write access (`writer`) or the one without (`reader`). */
  reviewComment(
    who: 'writer' | 'reader',
    at: { pr: number; commitId: string; path: string; line: number; body: string },
  ): Promise<unknown>;
  /** The login of the reader (its comment is listed with why). */
  readerLogin: string;
  /** The token the worker holds (it must be nowhere in the repository). */
  token: string;
}

export interface ScenarioRun {
  repo: string;
  /** git in the repository, synchronous: only for what stays local. */
  git(args: string[]): string;
  /** The two PRs as they were opened. */
  m1: PullRequestStatus;
  m2: PullRequestStatus;
  done: SagaStatus;
}

const gitArgs = (args: string[]) => ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args];

/** The greeting sample on the forge as alice/demo, the demo agent's answers for two fix tasks, the config. */
async function prepare(env: SagaTestEnv, forge: ScenarioForge) {
  const repo = createSampleRepo(path.join(env.tmp('repo'), 'greeting'));
  const baseEnv = { PATH: process.env.PATH, HOME: repo, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (args: string[]): string =>
    execFileSync('git', gitArgs(args), { cwd: repo, encoding: 'utf8', env: baseEnv }).trim();
  // Asynchronous: a stand-in answers in this very process, which a synchronous git would block.
  const remoteGit = async (args: string[]): Promise<void> => {
    const auth = { ...baseEnv, ...forge.ownerGitEnv, GIT_TERMINAL_PROMPT: '0' };
    await promisify(execFile)('git', gitArgs(args), { cwd: repo, env: auth });
  };
  const scriptFile = path.join(repo, '.saga', 'demo-script.json');
  const script = JSON.parse(readFileSync(scriptFile, 'utf8')) as { tasks: Record<string, unknown> };
  const fix = (file: string, summary: string) => ({
    attempts: [{ files: { [file]: `${summary}\n` }, report: { status: 'done', summary } }],
  });
  script.tasks.m1fix1 = fix('ci-fix.txt', 'Fixed the failing CI check.');
  script.tasks.m1fix2 = fix('review-fix.txt', 'Did what the reviewer asked.');
  writeFileSync(scriptFile, JSON.stringify(script, null, 2));
  git(['commit', '-qam', 'Demo answers for the fix tasks']);
  git(['remote', 'add', 'origin', forge.remoteUrl]);
  await remoteGit(['push', '-q', '--force', 'origin', 'main']);
  const configFile = path.join(env.tmp('config'), 'saga.config.yaml');
  const config = ['default_agent: demo', 'attempts: 3', 'delivery: pr', 'ci_fix_attempts: 2', 'forge:'];
  writeFileSync(configFile, [...config, ...forge.config.map((line) => `  ${line}`), ''].join('\n'));
  return { repo, git, remoteGit, configFile };
}

export async function runDeliveryScenario(
  env: SagaTestEnv,
  name: string,
  forge: ScenarioForge,
): Promise<ScenarioRun> {
  const { repo, git, remoteGit, configFile } = await prepare(env, forge);
  const prsOf = (s: SagaStatus): PullRequestStatus[] => s.pullRequests ?? [];
  const pr = (s: SagaStatus, milestone: number) => prsOf(s).find((p) => p.milestone === milestone)!;
  // What the forge webhook would do: the saga hears that something changed and its watch looks now.
  const poke = (kind: 'ci' | 'review') =>
    env.client.workflow
      .getHandle(sagaWorkflowId(name))
      .signal(forgeEventSignal, { kind, head: null, sha: null });
  const status = (predicate: (s: SagaStatus) => boolean) => waitForStatus(env, name, predicate, 240_000);
  const greenHeads = async (s: SagaStatus) => {
    for (const p of prsOf(s)) await forge.setStatus(p.headSha, 'success', 'tests passed');
    await poke('ci');
    return status((now) => prsOf(now).every((p) => p.ci === 'success'));
  };

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
      name,
      '--',
      'Add greeting',
    ],
    env.cliEnv,
  );
  expect(start.stderr).toBe('');
  expect(start.code).toBe(0);
  await waitForPending(env, name, 'confirm-name', 120_000);
  expect((await runSaga(['respond', name, 'confirm-name', 'confirm'], env.cliEnv)).code).toBe(0);
  await waitForPending(env, name, 'plan-approval-1', 120_000);
  expect((await runSaga(['approve', name], env.cliEnv)).code).toBe(0);

  // Both milestones integrated: two stacked draft PRs, their bodies with the exit criteria's results.
  const atAcceptance = await status((s) => s.pending.some((p) => p.id === 'acceptance-1'));
  const acceptance = atAcceptance.pending.find((p) => p.id === 'acceptance-1')!;
  expect(acceptance.options).toEqual(['accept', 'merge', 'mark ready', 'report issues']);
  const [m1, m2] = [pr(atAcceptance, 1), pr(atAcceptance, 2)];
  expect(m1).toMatchObject({ head: deliveryBranch(name, 1), base: 'main', draft: true, state: 'open' });
  expect(m2).toMatchObject({ head: deliveryBranch(name, 2), base: deliveryBranch(name, 1), draft: true });
  expect(acceptance.prompt).toContain(`#${m1.number} (milestone 1) ${m1.head} → main, draft, CI`);
  const read = async (head: string) => (await forge.adapter.findPullRequest(head))!;
  await waitUntil(async () => (await read(m2.head)).body.includes('(passed)'));
  expect((await read(m1.head)).body).toContain('- [x] E1: greet() returns the greeting (passed)');
  expect((await read(m1.head)).body).toContain(`Saga \`${name}\`: milestone 1`);
  expect((await read(m2.head)).body).toContain(`Stacked on #${m1.number}`);
  expect((await read(m1.head)).draft).toBe(true);

  // CI fails on the bottom PR: a fix task, its commit pushed, merged up into the PR above it.
  await forge.setStatus(m1.headSha, 'failure', 'tests failed in 12s', 'http://ci.example/1');
  await poke('ci');
  const fixed = await status((s) => pr(s, 1).ciFixes === 1 && pr(s, 1).headSha !== m1.headSha);
  const m1b = pr(fixed, 1);
  expect(pr(fixed, 2).headSha).not.toBe(m2.headSha);
  await remoteGit(['fetch', '-q', 'origin']);
  expect(git(['show', `origin/${m1.head}:ci-fix.txt`])).toBe('Fixed the failing CI check.');
  expect(git(['show', `origin/${m2.head}:ci-fix.txt`])).toBe('Fixed the failing CI check.');
  expect(git(['rev-parse', `origin/${m1.head}`])).toBe(m1b.headSha);

  // The CI system says the new heads pass: the saga sees green.
  await greenHeads(fixed);

  // The writer asks for a change: a fix task, a pushed commit, a reply; the reader's is listed only.
  const at = { pr: m1.number, commitId: m1b.headSha, path: 'src/greet.js', line: 1 };
  await forge.reviewComment('reader', { ...at, body: 'Rename everything' });
  await forge.reviewComment('writer', { ...at, body: 'Add a doc comment' });
  await poke('review');
  const reviewed = await status((s) => pr(s, 1).reviewFixes === 1 && pr(s, 1).headSha !== m1b.headSha);
  expect(pr(reviewed, 1).listedComments).toEqual([
    expect.objectContaining({ author: forge.readerLogin, why: 'no write access' }),
  ]);
  await remoteGit(['fetch', '-q', 'origin']);
  expect(git(['show', `origin/${m1.head}:review-fix.txt`])).toBe('Did what the reviewer asked.');
  const reply = `Addressed in ${pr(reviewed, 1).headSha.slice(0, 12)}`;
  await waitUntil(async () =>
    (await forge.adapter.reviewComments(m1.number)).some((c) => c.body.includes(reply)),
  );
  // The reader's comment started nothing: two fix tasks in all.
  expect(prsOf(reviewed).reduce((n, p) => n + p.ciFixes + p.reviewFixes, 0)).toBe(2);

  // The new heads pass CI (a protected branch wants it); acceptance: merge, both in order, through the forge.
  await greenHeads(reviewed);
  const both = await runSaga(['accept', name, '--merge', '--fast-forward'], env.cliEnv);
  expect(both.code).toBe(1);
  expect(both.stderr).toContain('give one of --fast-forward, --merge, not several');
  const merged = await runSaga(['accept', name, '--merge'], env.cliEnv);
  expect(merged.stderr).toBe('');
  expect(merged.code).toBe(0);
  expect(merged.stdout).toContain('Merge requested (acceptance-1)');
  const done = await status((s) => s.phase === 'complete');
  expect(prsOf(done).map((p) => p.state)).toEqual(['merged', 'merged']);
  await remoteGit(['fetch', '-q', 'origin']);
  for (const file of ['bin/greet.js', 'src/greet.js', 'ci-fix.txt', 'review-fix.txt'])
    expect(git(['cat-file', '-t', `origin/main:${file}`])).toBe('blob');

  // The histories this saga wrote replay on the current code.
  for (const id of [
    sagaWorkflowId(name),
    phaseWorkflowId(name, 'implementation'),
    phaseWorkflowId(name, 'delivery'),
  ]) {
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    await Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE } }, history, id);
  }

  // The token never reached the repository's config or its history.
  expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.toContain(forge.token);
  expect(git(['log', '--all', '-p', '--format=%H %s%n%b'])).not.toContain(forge.token);
  return { repo, git, m1, m2, done };
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 500));
  }
}
