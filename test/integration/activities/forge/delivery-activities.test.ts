/**
 * The delivery activities (src/activities/forge/delivery-activities.ts) as a worker runs them, against a
 * REAL Gitea (test/harness/gitea.ts) and a real clone in a temp folder (test/harness/delivery-repo.ts): a
 * milestone delivered twice is one draft PR; a look reads CI from commit statuses and bob's (write) and
 * carol's (read) review comments with their rights, in few calls; a reply shows in the thread once; merging
 * the stack retargets m2 and merges both in order, and Gitea's branch protection is a refusal with Gitea's
 * reason; no token in .git/config or the history. Landing a fix: land-fix.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createForgeActivities,
  type ForgeActivities,
  type ForgeRef,
} from '../../../../src/activities/forge/delivery-activities';
import type { PullRequest } from '../../../../src/activities/forge/port';
import { countingProxy, type CountingProxy } from '../../../harness/counting-proxy';
import { deliveryRepo, M1, M2, sagaPrBody, type DeliveryRepo } from '../../../harness/delivery-repo';
import { startGitea, type TestGitea } from '../../../harness/gitea';

const TOKEN_ENV = 'SAGA_TEST_DELIVERY_TOKEN';
const root = mkdtempSync(path.join(os.tmpdir(), 'saga-delivery-acts-'));
let gitea: TestGitea;
let acts: ForgeActivities;
let ref: ForgeRef;
let clone: DeliveryRepo;
const prs: PullRequest[] = [];

beforeAll(async () => {
  gitea = await startGitea();
  const env = { [TOKEN_ENV]: gitea.users.alice.token };
  acts = createForgeActivities({ env: () => env });
  clone = deliveryRepo(gitea, root);
  ref = {
    repo: clone.repo,
    remote: 'origin',
    target: { kind: 'gitea', url: gitea.url, owner: 'alice', repo: 'demo', tokenEnv: TOKEN_ENV },
  };
}, 120_000);

afterAll(async () => {
  await gitea?.stop();
  rmSync(root, { recursive: true, force: true });
});

const head = (branch: string) => clone.head(branch);

test('deliverMilestone twice opens one draft PR per milestone, stacked', async () => {
  const first = {
    ...ref,
    head: M1,
    headSha: head(M1),
    base: 'main',
    title: 'greet: m1',
    body: sagaPrBody(1),
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
  expect(clone.remoteHeads()).toMatchObject({ [M1]: head(M1), [M2]: head(M2) });
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

test('updatePullRequestBody replaces the saga’s part in place; a person’s note and the draft stay', async () => {
  const [one] = prs;
  await gitea.api('alice', 'PATCH', `/repos/alice/demo/pulls/${one!.number}`, {
    body: `A reviewer's note\n\n${one!.body}\n\nP.S. looks fine`,
  });
  const update = { target: ref.target, number: one!.number, body: sagaPrBody(1, 'passed') };
  const updated = await acts.updatePullRequestBody(update);
  expect(updated.body).toBe(`A reviewer's note\n\n${sagaPrBody(1, 'passed')}\n\nP.S. looks fine`);
  expect(updated.body).toContain('- [x] E1: greet prints hello (passed)');
  expect(updated).toMatchObject({ draft: true, title: 'greet: m1' });
  // The same body again: nothing to write (and no second copy of the saga's part).
  expect(await acts.updatePullRequestBody(update)).toEqual(updated);
  // Not the saga's part (no markers): refused, the PR as it was.
  await expect(acts.updatePullRequestBody({ ...update, body: 'plain text' })).rejects.toThrow(
    /body must be the saga's part of the PR body/,
  );
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
  clone.git(
    ['fetch', '-q', gitea.repo.cloneUrl, 'main:refs/remotes/check/main'],
    clone.repo,
    gitea.gitEnv('alice'),
  );
  for (const pr of prs) clone.git(['merge-base', '--is-ancestor', pr.headSha, 'refs/remotes/check/main']);
  // Merged already: a retry merges nothing again and says so.
  expect(await acts.mergePullRequests(input)).toEqual(result);
});

test('no token in .git/config or anywhere in the history', () => {
  const token = gitea.users.alice.token;
  expect(readFileSync(path.join(clone.repo, '.git', 'config'), 'utf8')).not.toContain(token);
  expect(clone.git(['log', '--all', '-p', '--format=%H %an %s%n%b'])).not.toContain(token);
  expect(clone.git(['reflog', '--all'])).not.toContain(token);
});
