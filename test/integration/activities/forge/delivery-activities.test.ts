/**
 * The delivery activities (src/activities/forge/delivery-activities.ts) as a worker runs them, against a
 * REAL Gitea (test/harness/gitea.ts) and a real clone in a temp folder: a milestone delivered twice is one
 * draft PR; a look reads CI from commit statuses and bob's (write) and carol's (read) review comments with
 * their rights, in few calls; a fix on m1 lands on m1, is merged up into m2 and the integration branch, all
 * pushed; a conflicting fix moves and pushes nothing; a reply shows in the thread once; merging the stack
 * retargets m2 and merges both in order, and Gitea's branch protection is a refusal with Gitea's reason; no
 * token in .git/config or the history.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createForgeActivities,
  type ForgeActivities,
  type ForgeRef,
} from '../../../../src/activities/forge/delivery-activities';
import type { PullRequest } from '../../../../src/activities/forge/port';
import { deliveryBranch, integrationBranch } from '../../../../src/domain/contract/naming';
import { startGitea, type TestGitea } from '../../../harness/gitea';
import { countingProxy, type CountingProxy } from '../../../harness/counting-proxy';

const TOKEN_ENV = 'SAGA_TEST_DELIVERY_TOKEN';
const root = mkdtempSync(path.join(os.tmpdir(), 'saga-delivery-acts-'));
const repo = path.join(root, 'repo');
const integrationWorktree = path.join(root, 'integration');
const M1 = deliveryBranch('greet', 1);
const M2 = deliveryBranch('greet', 2);
const INTEGRATION = integrationBranch('greet');
let gitea: TestGitea;
let acts: ForgeActivities;
let ref: ForgeRef;
const prs: PullRequest[] = [];

const git = (args: string[], cwd = repo, extraEnv: Record<string, string> = {}): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@saga.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1', ...extraEnv },
  }).trim();

const head = (branch: string) => git(['rev-parse', `refs/heads/${branch}`]);
/** The forge's branches, as `git ls-remote` sees them (with alice's token, as a person would look). */
function remoteHeads(): Record<string, string> {
  const out = execFileSync('git', ['ls-remote', '--heads', gitea.repo.cloneUrl], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), ...gitea.gitEnv('alice') },
  });
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([sha, name]) => [name!.replace('refs/heads/', ''), sha!]),
  );
}

function commit(branch: string, file: string, text: string): string {
  git(['checkout', '-q', branch]);
  writeFileSync(path.join(repo, file), text);
  git(['add', file]);
  git(['commit', '-q', '-m', `${branch}: ${file}`]);
  return head(branch);
}

async function failureOf(
  promise: Promise<unknown>,
): Promise<Error & { type?: string; nonRetryable?: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  gitea = await startGitea();
  const env = { [TOKEN_ENV]: gitea.users.alice.token };
  acts = createForgeActivities({ env: () => env });
  execFileSync('git', ['clone', '-q', gitea.repo.cloneUrl, repo], {
    env: { PATH: process.env.PATH, HOME: path.join(root, 'home'), ...gitea.gitEnv('alice') },
  });
  // The saga's work: milestone 1 adds a.txt, milestone 2 b.txt, each delivery branch the integration as it was.
  git(['checkout', '-q', '-b', INTEGRATION]);
  git(['branch', M1, commit(INTEGRATION, 'a.txt', 'one\ntwo\nthree\n')]);
  git(['branch', M2, commit(INTEGRATION, 'b.txt', 'bee\n')]);
  git(['checkout', '-q', 'main']);
  // The integration branch is checked out in the saga's integration worktree, as while a saga runs.
  git(['worktree', 'add', '-q', integrationWorktree, INTEGRATION]);
  ref = {
    repo,
    remote: 'origin',
    target: { kind: 'gitea', url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
  };
}, 120_000);

afterAll(async () => {
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('deliverMilestone twice opens one draft PR per milestone, stacked', async () => {
  const first = {
    ...ref,
    head: M1,
    headSha: head(M1),
    base: 'main',
    title: 'greet: m1',
    body: 'Milestone 1',
  };
  const one = await acts.deliverMilestone(first);
  expect(await acts.deliverMilestone(first)).toMatchObject({ number: one.number });
  const two = await acts.deliverMilestone({
    ...first,
    head: M2,
    headSha: head(M2),
    base: M1,
    title: 'greet: m2',
  });
  expect(one).toMatchObject({ head: M1, base: 'main', draft: true, state: 'open', headSha: head(M1) });
  expect(two).toMatchObject({ head: M2, base: M1, draft: true });
  const all = (await gitea.api('alice', 'GET', '/repos/alice/demo/pulls?state=all')) as { number: number }[];
  expect(all.map((p) => p.number).sort()).toEqual([one.number, two.number].sort());
  prs.push(one, two);
  expect(remoteHeads()).toMatchObject({ [M1]: head(M1), [M2]: head(M2) });
});

test('a look: CI from commit statuses, review comments with their authors’ rights, in few calls', async () => {
  const [one] = prs;
  await gitea.setStatus(one!.headSha, 'failure', 'ci/build', '2 tests failed', 'http://ci.example/1');
  await gitea.reviewComment('bob', { pr: one!.number, path: 'a.txt', line: 2, body: 'bob: say 2' });
  await gitea.reviewComment('carol', { pr: one!.number, path: 'a.txt', line: 3, body: 'carol: say 3' });
  const proxy: CountingProxy = await countingProxy(gitea.url);
  try {
    const counted = createForgeActivities({ env: () => ({ [TOKEN_ENV]: gitea.users.alice.token }) });
    const target = { ...ref.target, url: proxy.url };
    const [look] = await counted.lookAtPullRequests({
      target,
      prs: [{ number: one!.number, headSha: one!.headSha, etag: null }],
    });
    expect(look!.pullRequest).toMatchObject({ number: one!.number, headSha: one!.headSha, state: 'open' });
    expect(look!.ci).toMatchObject({ state: 'failure', sha: one!.headSha });
    expect(look!.ci !== 'not-modified' && look!.ci.checks).toEqual([
      {
        name: 'ci/build',
        state: 'failure',
        description: '2 tests failed',
        targetUrl: 'http://ci.example/1',
        logExcerpt: null,
      },
    ]);
    const by = (login: string) => look!.comments.find((c) => c.author === login);
    expect(by('bob')).toMatchObject({ authorCanWrite: true, path: 'a.txt', line: 2, body: 'bob: say 2' });
    expect(by('carol')).toMatchObject({ authorCanWrite: false, line: 3 });
    // The PR, its status, its reviews, each review's comments (2), each author's rights (2).
    console.log(`Gitea: one look at one PR with two reviews cost ${proxy.calls.length} calls`, proxy.calls);
    expect(proxy.calls).toHaveLength(7);

    await gitea.setStatus(one!.headSha, 'success', 'ci/build', 'all green');
    const [green] = await counted.lookAtPullRequests({
      target,
      prs: [{ number: one!.number, headSha: one!.headSha, etag: null }],
    });
    expect(green!.ci).toMatchObject({ state: 'success' });
  } finally {
    await proxy.close();
  }
});

test('replyToReview: the reply shows in the reviewer’s thread, once even when retried', async () => {
  const [one] = prs;
  const [look] = await acts.lookAtPullRequests({
    target: ref.target,
    prs: [{ number: one!.number, headSha: one!.headSha, etag: null }],
  });
  const bob = look!.comments.find((c) => c.author === 'bob')!;
  const reply = { target: ref.target, number: one!.number, comment: bob, body: 'Fixed in 1234567.' };
  await acts.replyToReview(reply);
  await acts.replyToReview(reply); // a retry after a lost answer
  const [after] = await acts.lookAtPullRequests({
    target: ref.target,
    prs: [{ number: one!.number, headSha: one!.headSha, etag: null }],
  });
  const replies = after!.comments.filter((c) => c.body === 'Fixed in 1234567.');
  expect(replies).toHaveLength(1);
  expect(replies[0]).toMatchObject({ threadId: bob.threadId, author: 'alice' });
});

test('landFix: a fix on m1 reaches m2 and the integration branch, all pushed; a retry changes nothing', async () => {
  const [m1Before, m2Before] = [head(M1), head(M2)];
  git(['branch', 'saga/greet/m1-fix', M1]);
  const fix = commit('saga/greet/m1-fix', 'a.txt', 'one\n2\nthree\n');
  git(['checkout', '-q', 'main']);
  const input = {
    ...ref,
    fixBranch: 'saga/greet/m1-fix',
    stack: prs.map((pr) => ({ head: pr.head, number: pr.number })),
    at: 0,
    integrationBranch: INTEGRATION,
  };
  const landed = await acts.landFix(input);
  expect(landed.commit).toBe(fix);
  expect(head(M1)).toBe(fix);
  const m2 = head(M2);
  expect(git(['rev-list', '--parents', '-n', '1', m2]).split(' ').slice(1)).toEqual([m2Before, fix]);
  expect(git(['show', `${m2}:a.txt`])).toBe('one\n2\nthree');
  expect(landed.heads).toEqual({ [M1]: fix, [M2]: m2 });
  expect(head(INTEGRATION)).toBe(m2);
  // The integration worktree followed its branch: the fix is in its files, nothing left dirty.
  expect(readFileSync(path.join(integrationWorktree, 'a.txt'), 'utf8')).toBe('one\n2\nthree\n');
  expect(git(['status', '--porcelain'], integrationWorktree)).toBe('');
  expect(remoteHeads()).toMatchObject({ [M1]: fix, [M2]: m2 });
  expect(m1Before).not.toBe(fix);

  expect(await acts.landFix(input)).toEqual(landed);
  expect([head(M1), head(M2), head(INTEGRATION)]).toEqual([fix, m2, m2]);
  prs.splice(0, 2, { ...prs[0]!, headSha: fix }, { ...prs[1]!, headSha: m2 });
});

test('landFix: a conflicting fix fails naming the branches and files; nothing moves here or on the forge', async () => {
  git(['branch', 'saga/greet/m1-clash', M1]);
  commit('saga/greet/m1-clash', 'b.txt', 'not a bee\n');
  git(['checkout', '-q', 'main']);
  const before = { local: [head(M1), head(M2), head(INTEGRATION)], remote: remoteHeads() };
  const input = {
    ...ref,
    fixBranch: 'saga/greet/m1-clash',
    stack: prs.map((pr) => ({ head: pr.head, number: pr.number })),
    at: 0,
    integrationBranch: INTEGRATION,
  };
  const failure = await failureOf(acts.landFix(input));
  expect(failure.message).toContain(`merging '${M1}'`);
  expect(failure.message).toContain(`into '${M2}'`);
  expect(failure.message).toContain('conflicts in b.txt');
  expect(failure).toMatchObject({ type: 'FixConflict', nonRetryable: true });
  expect([head(M1), head(M2), head(INTEGRATION)]).toEqual(before.local);
  expect(remoteHeads()).toEqual(before.remote);

  // A fix that did not start from its delivery branch is refused the same way.
  git(['branch', 'saga/greet/m1-elsewhere', 'main']);
  commit('saga/greet/m1-elsewhere', 'c.txt', 'sea\n');
  git(['checkout', '-q', 'main']);
  const stray = await failureOf(acts.landFix({ ...input, fixBranch: 'saga/greet/m1-elsewhere' }));
  expect(stray).toMatchObject({ type: 'FixNotOnBranch', nonRetryable: true });
  expect(stray.message).toContain(`does not descend from '${M1}'`);
  expect([head(M1), head(M2), head(INTEGRATION)]).toEqual(before.local);
  expect(remoteHeads()).toEqual(before.remote);
});

test('mergePullRequests: branch protection refuses with Gitea’s reason; then both merge, in order', async () => {
  await gitea.api('alice', 'POST', '/repos/alice/demo/branch_protections', {
    rule_name: 'main',
    enable_status_check: true,
    status_check_contexts: ['ci/required'],
  });
  await acts.markReady({ target: ref.target, numbers: prs.map((p) => p.number) });
  const input = {
    target: ref.target,
    prs: prs.map((p) => ({ number: p.number, base: p.base, headSha: p.headSha })),
    baseBranch: 'main',
    method: 'merge' as const,
  };
  const refused = await acts.mergePullRequests(input);
  expect(refused.merged).toEqual([]);
  expect(refused.refused?.number).toBe(prs[0]!.number);
  console.log('Gitea refused the merge:', refused.refused?.message);
  expect(refused.refused?.message).toMatch(/HTTP 405: .*(status check|Not all required)/i);

  // A head that moved since the user saw it is not merged either.
  const moved = await acts.mergePullRequests({
    ...input,
    prs: [{ ...input.prs[0]!, headSha: prs[1]!.headSha }, input.prs[1]!],
  });
  expect(moved.refused?.message).toMatch(/head moved/);

  for (const pr of prs) await gitea.setStatus(pr.headSha, 'success', 'ci/required', 'ok');
  const result = await acts.mergePullRequests(input);
  expect(result).toEqual({ merged: prs.map((p) => p.number), refused: null });
  const second = (await gitea.api('alice', 'GET', `/repos/alice/demo/pulls/${prs[1]!.number}`)) as {
    base: { ref: string };
    merged: boolean;
  };
  expect(second).toMatchObject({ base: { ref: 'main' }, merged: true });
  git(['fetch', '-q', gitea.repo.cloneUrl, 'main:refs/remotes/check/main'], repo, gitea.gitEnv('alice'));
  for (const pr of prs) git(['merge-base', '--is-ancestor', pr.headSha, 'refs/remotes/check/main']);
  // Merged already: a retry merges nothing again and says so.
  expect(await acts.mergePullRequests(input)).toEqual(result);
});

test('no token in .git/config or anywhere in the history', () => {
  const token = gitea.users.alice.token;
  expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).not.toContain(token);
  expect(git(['log', '--all', '-p', '--format=%H %an %s%n%b'])).not.toContain(token);
  expect(git(['reflog', '--all'])).not.toContain(token);
});
